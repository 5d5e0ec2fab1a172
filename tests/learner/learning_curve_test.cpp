#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "learner/learning_curve.hpp"

using namespace gantry;

TEST_CASE("a learning curve round-trips through its CSV text; damage names the line", "[learner]") {
  const std::vector<CurvePoint> curve{{160, 0.4135261234, 10, 1.2078412345, 1.0768856789, 0.6171875, 4.126671234, 3.758712345, 386.9},
                                      {4160, 5.001180001, 260, 1.146170001, 0.98794, 0.92513, 1.79049, -0.0327680001, 831.2}};
  const std::string text = learning_curve_csv(curve);
  CHECK(text.rfind("episodes,seconds,version,mean_ratio,best_ratio,match,entropy,loss,episodes_per_second\n", 0) == 0);
  auto back = learning_curve_from_csv(text, "t");
  REQUIRE(back.ok());
  REQUIRE(back.value().size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const CurvePoint &a = curve[i], &b = back.value()[i];
    CHECK((b.episodes == a.episodes && b.version == a.version));
    for (auto field : {&CurvePoint::seconds, &CurvePoint::mean_ratio, &CurvePoint::best_ratio, &CurvePoint::match,
                       &CurvePoint::entropy, &CurvePoint::loss, &CurvePoint::episodes_per_second})
      CHECK(b.*field == Approx(a.*field).epsilon(1e-9));  // ten significant digits
  }
  CHECK(learning_curve_from_csv(learning_curve_csv({}), "t").value().empty());
  CHECK_THAT(learning_curve_from_csv("episodes\n1\n", "the curve").error().message,
             Catch::Contains("the curve") && Catch::Contains("starts with"));
  const std::string header = text.substr(0, text.find('\n') + 1);
  for (const char* bad : {"1,2,3\n", "1,2,3,4,5,6,7,8,9,10\n", "nan,2,3,4,5,6,7,8,9\n", "-1,2,3,4,5,6,7,8,9\n",
                          "1.5,2,3,4,5,6,7,8,9\n", "1,2,3,4,5,6,7,8,9x\n", "\n1,2,3,4,5,6,7,8,9\n"}) {
    INFO(bad);
    CHECK_THAT(learning_curve_from_csv(header + "1,2,3,4,5,6,7,8,9\n" + bad, "c").error().message, Catch::Contains("line 3"));
  }
  // A diverged run's nan loss and inf entropy read back; CRLF line ends and a blank last line are fine.
  CurvePoint diverged = curve[0];
  diverged.loss = std::nan("");
  diverged.entropy = std::numeric_limits<double>::infinity();
  auto odd = learning_curve_from_csv(learning_curve_csv({diverged}), "t");
  REQUIRE(odd.ok());
  CHECK((std::isnan(odd.value()[0].loss) && std::isinf(odd.value()[0].entropy) && odd.value()[0].episodes == 160));
  std::string crlf;
  for (char ch : text) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  auto windows = learning_curve_from_csv(crlf + "\r\n", "t");
  REQUIRE(windows.ok());
  CHECK(windows.value().size() == 2);
}
