// What the reader checks of a program once its JSON is read, so that the executor meets no
// dangling name and no tensor whose storage the archive cannot fill. Private to src/pt2.
#pragma once

#include <string>

#include "pt2/program.h"

namespace layoutprof::pt2 {

// Every name an argument uses is defined before (the graph's inputs, then each node's outputs
// in order), and defined once; nested graphs (as_graph) have their own inputs.
void check_definitions(const Graph& graph, const std::string& at);

}  // namespace layoutprof::pt2
