// gantry: autotuning of ML execution plans. One file per verb; cli/gantry_main.cpp wires them up.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return gantry::cli::gantry_main(argc, argv); }
