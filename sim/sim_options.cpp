#include "sim/sim_options.hpp"

namespace gantry {

const char* to_string(Dispatch dispatch) {
  switch (dispatch) {
    case Dispatch::fifo: return "fifo";
    case Dispatch::priority: return "priority";
    case Dispatch::fixed_order: return "fixed-order";
  }
  return "?";
}

const char* to_string(LinkModel links) { return links == LinkModel::unlimited ? "unlimited" : "contention"; }

std::optional<Dispatch> parse_dispatch(const std::string& name) {
  for (Dispatch d : {Dispatch::fifo, Dispatch::priority, Dispatch::fixed_order})
    if (name == to_string(d)) return d;
  return std::nullopt;
}

std::optional<LinkModel> parse_link_model(const std::string& name) {
  for (LinkModel l : {LinkModel::contention, LinkModel::unlimited})
    if (name == to_string(l)) return l;
  return std::nullopt;
}

}  // namespace gantry
