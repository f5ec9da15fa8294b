// b2nd append (issue 57): a .npy file's frames appended to an array, along axis 0 and another
// axis, equal to what NumPy concatenates; a source of another dtype or shape is refused by name.
#include <catch2/catch.hpp>

#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using Catch::Matchers::Contains;

TEST_CASE("cli append: frames from .npy files, along axis 0 and axis 1", "[cli][append]") {
    b2nd::test::TempDir tmp;
    B2ND_NUMPY_OR_SKIP(
        "d = sys.argv[1]\n"
        "a = np.arange(5 * 6 * 4, dtype='<u2').reshape(5, 6, 4)\n"
        "b = (np.arange(7 * 6 * 4, dtype='<u2') * 3).reshape(7, 6, 4)\n"
        "np.save(d + '/a.npy', a)\n"
        "np.save(d + '/b.npy', b)\n"
        "np.save(d + '/one.npy', b[0])\n"
        "np.save(d + '/b6.npy', b[:6])\n"
        "np.save(d + '/ab.npy', np.concatenate([a, b, b[:1]]))\n"
        "c = np.arange(6 * 2 * 4, dtype='<u2').reshape(6, 2, 4)\n"
        "np.save(d + '/c.npy', c)\n"
        "np.save(d + '/bc.npy', np.concatenate([b[:6], c], axis=1))\n"
        "np.save(d + '/f4.npy', a.astype('<f4'))\n",
        tmp.path());
    const std::string t = q(tmp / "t.b2nd");
    // What NumPy concatenated, as arrays diff compares.
    for (const char* e : {"ab", "bc"}) {
        REQUIRE(run("import " + q(tmp / (std::string(e) + ".npy")) + " " +
                    q(tmp / (std::string(e) + ".b2nd")))
                    .status == 0);
    }
    REQUIRE(run("import " + q(tmp / "a.npy") + " " + t + " --chunks 4,6,4").status == 0);
    auto r = run("append " + t + " " + q(tmp / "b.npy"));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("(12, 6, 4) <u2, 7 appended along axis 0"));
    CHECK(run("append " + t + " " + q(tmp / "one.npy")).status == 0);  // one frame
    CHECK(run("diff " + t + " " + q(tmp / "ab.b2nd")).status == 0);

    // Along axis 1 of (6, 6, 4): slabs of (6, n, 4).
    const std::string u = q(tmp / "u.b2nd");
    REQUIRE(run("import " + q(tmp / "b6.npy") + " " + u + " --chunks 6,4,4").status == 0);
    r = run("append " + u + " " + q(tmp / "c.npy") + " --axis 1");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(run("diff " + u + " " + q(tmp / "bc.b2nd")).status == 0);

    // Refusals: another dtype, another shape; the array unchanged.
    r = run("append " + t + " " + q(tmp / "f4.npy"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("f4.npy") && Contains("holds dtype <f4"));
    r = run("append " + t + " " + q(tmp / "c.npy"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("has shape (6, 2, 4)") && Contains("takes the shape (6, 4)"));
    CHECK(run("diff " + t + " " + q(tmp / "ab.b2nd")).status == 0);
}
