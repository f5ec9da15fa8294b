// Messages of the array API in the caller's terms: shapes rather than bytes, the option that
// would help, the file named; never a temporary name or an internal function.
#include <filesystem>
#include <functional>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/temp_dir.hpp"

using Catch::Matchers::Contains;

TEST_CASE("messages: append and insert of data that is not whole slices speak in shapes",
          "[array]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "a.b2nd", {4, 10});
    CHECK_THROWS_WITH(a.append(0, std::vector<float>(7)),
                      Contains("a.b2nd") && Contains("append along axis 0") &&
                          Contains("the data holds 7 elements of '<f4'") &&
                          Contains("must have shape (n, 10)") &&
                          Contains("a multiple of 10 elements") && !Contains("bytes"));
    CHECK_THROWS_WITH(
        a.any().append(1, {reinterpret_cast<const std::uint8_t*>("abcdef"), 6}),
        Contains("6 bytes, not a whole number of '<f4' elements") && Contains("shape (4, n)"));
    auto v = b2nd::NDArray<float>::create(tmp / "v.b2nd", {3});
    CHECK_NOTHROW(v.append(0, std::vector<float>(5)));
    CHECK(v.shape() == b2nd::Shape{8});
}

TEST_CASE("messages: writes and attributes on a read-only handle say how to open for writing",
          "[array]") {
    b2nd::test::TempDir tmp;
    (void)b2nd::NDArray<float>::create(tmp / "r.b2nd", {4});
    auto r = b2nd::AnyArray::open(tmp / "r.b2nd");
    for (const auto& f : std::vector<std::function<void()>>{
             [&] { r.attrs()["units"] = "K"; },
             [&] { r.attrs().erase("units"); },
         }) {
        CHECK_THROWS_AS(f(), b2nd::UsageError);
        CHECK_THROWS_WITH(f(), Contains("r.b2nd") && Contains("attribute 'units'") &&
                                   Contains("open read-only") &&
                                   Contains("OpenOptions::writable") && !Contains("set_vlmeta") &&
                                   !Contains("delete_vlmeta"));
    }
    const std::vector<std::uint8_t> four(16);
    CHECK_THROWS_WITH(r.write(b2nd::Box::whole({4}), {four.data(), four.size()}),
                      Contains("open read-only") && Contains("OpenOptions::writable"));
}

TEST_CASE("messages: create names the file and the option, never a temporary name", "[array]") {
    b2nd::test::TempDir tmp;
    (void)b2nd::NDArray<float>::create(tmp / "e.b2nd", {4});
    CHECK_THROWS_WITH(b2nd::NDArray<float>::create(tmp / "e.b2nd", {4}),
                      Contains("e.b2nd") && Contains("already exists") && Contains("overwrite") &&
                          !Contains("b2nd-tmp"));
    b2nd::CreateOptions sparse;
    sparse.sparse = true;
    CHECK_THROWS_WITH(b2nd::NDArray<float>::create(tmp / "no/such/dir.b2frame", {4}, sparse),
                      Contains("\"" + tmp / "no/such/dir.b2frame" + "\"") && !Contains("tmp-"));
    CHECK_THROWS_WITH(
        b2nd::NDArray<float>::create_from(tmp / "f.b2nd", {2, 3}, std::vector<float>(5)),
        Contains("f.b2nd") && Contains("shape (2, 3)"));
    CHECK_FALSE(std::filesystem::exists(tmp / "f.b2nd"));
}
