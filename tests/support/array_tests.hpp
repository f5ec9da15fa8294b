// What the NDArray test files share (test_ndarray, test_typed, test_open_create, test_chunkwise,
// test_read_paths, test_element_reads): the includes and the names they use.
#pragma once

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/data.hpp"
#include "support/files.hpp"
#include "support/model.hpp"
#include "support/random_box.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using b2nd::DType;
using b2nd::Shape;
using b2nd::test::count_of;
using b2nd::test::Model;
using b2nd::test::random_items;
using b2nd::test::SplitMix;
using Catch::Matchers::Contains;
