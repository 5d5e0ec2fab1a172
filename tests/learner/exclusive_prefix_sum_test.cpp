// LibTorch first: its c10 logging defines a CHECK macro that Catch's must replace, not the reverse.
#include "learner/exclusive_prefix_sum.hpp"

#include <catch2/catch.hpp>

using namespace gantry;

namespace {

// The reference: ATen's own cumsum and autograd.
struct Reference {
  torch::Tensor out, grad;
};
Reference reference(const torch::Tensor& x, const torch::Tensor& upstream) {
  torch::Tensor leaf = x.detach().clone().requires_grad_();
  torch::Tensor out = leaf.cumsum(1) - leaf;
  out.backward(upstream);
  return {out.detach(), leaf.grad()};
}

}  // namespace

TEST_CASE("the exclusive prefix sum and its gradient equal ATen's cumsum", "[learner]") {
  torch::manual_seed(7);
  SECTION("values and gradients on several shapes") {
    const std::vector<std::vector<std::int64_t>> shapes{{3, 7, 2, 5}, {8, 192, 4, 64}, {2, 5}, {1, 1, 4}, {4, 3, 1}};
    for (const auto& shape : shapes) {
      INFO("shape " << torch::IntArrayRef(shape));
      const torch::Tensor x = torch::randn(shape);
      const torch::Tensor upstream = torch::randn(shape);
      const Reference want = reference(x, upstream);
      torch::Tensor leaf = x.clone().requires_grad_();
      torch::Tensor got = exclusive_prefix_sum(leaf);
      got.backward(upstream);
      CHECK(torch::allclose(got.detach(), want.out, 1e-5, 1e-4));
      CHECK(torch::allclose(leaf.grad(), want.grad, 1e-5, 1e-4));
      // The first step sums nothing; the gradient of the last step is zero.
      CHECK(got.detach().select(1, 0).abs().max().item<float>() == 0.0f);
      CHECK(leaf.grad().select(1, shape[1] - 1).abs().max().item<float>() == 0.0f);
    }
  }
  SECTION("strided inputs and gradients read as their values") {
    const torch::Tensor base = torch::randn({6, 2, 5});
    const torch::Tensor view = base.permute({1, 0, 2});  // [2, 6, 5], not contiguous
    REQUIRE_FALSE(view.is_contiguous());
    const torch::Tensor upstream = torch::randn({5, 6, 2}).permute({2, 1, 0});  // [2, 6, 5], not contiguous
    REQUIRE_FALSE(upstream.is_contiguous());
    const Reference want = reference(view, upstream);
    torch::Tensor leaf = view.clone().requires_grad_();  // keeps the permuted strides
    torch::Tensor got = exclusive_prefix_sum(leaf);
    got.backward(upstream);
    CHECK(torch::allclose(got.detach(), want.out, 1e-5, 1e-5));
    CHECK(torch::allclose(leaf.grad(), want.grad, 1e-5, 1e-5));
    // sum() sends back an expanded gradient of ones (stride 0): step t gets T - 1 - t.
    torch::Tensor ones_leaf = torch::randn({2, 4, 3}).requires_grad_();
    exclusive_prefix_sum(ones_leaf).sum().backward();
    const torch::Tensor expected = torch::tensor({3.0f, 2.0f, 1.0f, 0.0f}).view({1, 4, 1}).expand({2, 4, 3});
    CHECK(torch::equal(ones_leaf.grad(), expected));
  }
  SECTION("empty batches and sequences") {
    for (const auto& shape : std::vector<std::vector<std::int64_t>>{{0, 3, 2}, {2, 0, 3}}) {
      torch::Tensor leaf = torch::randn(shape).requires_grad_();
      torch::Tensor got = exclusive_prefix_sum(leaf);
      CHECK(got.sizes() == leaf.sizes());
      got.sum().backward();
      CHECK(leaf.grad().sizes() == leaf.sizes());
    }
  }
  SECTION("tensors it cannot scan are refused") {
    CHECK_THROWS_AS(exclusive_prefix_sum(torch::randn({5})), std::invalid_argument);
    CHECK_THROWS_AS(exclusive_prefix_sum(torch::ones({2, 3}, torch::kLong)), std::invalid_argument);
  }
}
