// b2nd verify PATH
#include <iostream>
#include <optional>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/storage/frame.hpp>

#include "cli.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kHelp =
    "usage: b2nd verify PATH [--nthreads N] [--max-seconds S]\n"
    "\n"
    "Checks the structure of the file (header, chunk index, trailer, metalayers and\n"
    "vlmetalayers) and decodes every chunk, checking each against the array's geometry.\n"
    "Files b2nd-cpp writes carry checksums (XXH3-64 of every chunk, the index, the header\n"
    "and the vlmetalayers): they are checked too, so any changed byte is found.\n"
    "Prints 'ok' and exits 0, or lists every corrupt chunk and exits 1.\n"
    "\n"
    "  --max-seconds S  stop after S seconds (a file's chunks may claim far more than it\n"
    "                   stores): what was found so far is listed, and the exit code is 1 if\n"
    "                   anything was wrong, else 4 (not all checked)\n"
    "\n"
    "What it cannot see in a file without checksums (written by c-blosc2 or python-blosc2,\n"
    "or changed by them since): a change that leaves a chunk decodable (a flipped bit inside\n"
    "compressed data, often) gives other values without any error. 'b2nd checksum add PATH'\n"
    "adds checksums to a file you trust.\n"
    "\n"
    "example:\n"
    "  b2nd verify t.b2nd\n";

/// What the checks could see, by the file's checksums.
std::string limits(const storage::ChecksumReport& r) {
    switch (r.state) {
        case storage::ChecksumReport::State::covered:
            return "structure, decoding and checksums (every chunk, the index, the header and "
                   "the vlmetalayers) checked";
        case storage::ChecksumReport::State::stale:
            return "structure and decoding checked; its checksums are stale (another program "
                   "changed the file after they were written: b2nd checksum add renews them), "
                   "so changed values cannot be detected";
        default:
            return "structure and decoding checked; this file carries no checksums, so changed "
                   "values cannot be detected (b2nd checksum add adds them)";
    }
}

/// verify of a Zarr array or an HDF5 dataset: every chunk read through the library (its codecs
/// and the checks its format carries: Zarr v3's crc32c, HDF5's Fletcher-32), each failure named.
int verify_bridged(const std::string& path, const std::string& kind, const Args& a) {
    const AnyArray arr = AnyArray::open(path, input_options(a));
    const Deadline deadline(a);
    const std::int64_t chunks = arr.grid().nchunks();
    ProgressBar bar("verify", chunks, static_cast<double>(arr.grid().chunk_nbytes()));
    std::vector<std::string> bad;
    std::vector<std::uint8_t> buf;
    std::int64_t checked = 0;
    for (std::int64_t i = 0; i < chunks && !deadline.passed(); ++i, ++checked) {
        const Box b = arr.grid().chunk_box(i);
        buf.resize(static_cast<std::size_t>(b.size() * arr.itemsize()));
        try {
            arr.read(b, buf.data(), buf.size());
        } catch (const Error& e) {
            bad.push_back(e.what());
        }
        bar.update(i + 1);
    }
    const std::string shown = redact_secrets(path);
    for (const std::string& why : bad) {
        std::cout << why << "\n";
    }
    if (bad.empty() && checked < chunks) {
        std::cout << deadline.reached() << shown << ": " << checked << " of " << chunks
                  << " chunks read, nothing wrong in them; the rest unchecked\n";
        return kExitStopped;
    }
    if (bad.empty()) {
        std::cout << "ok: " << shown << ": " << kind << ", " << chunks << " chunks read and decoded"
                  << (kind == "a Zarr array" ? " (crc32c checked where its codecs carry one)"
                                             : " (Fletcher-32 checked where its filters carry it)")
                  << "; values a change leaves decodable cannot be told from good ones\n";
        return 0;
    }
    std::cout << "bad: " << shown << ": " << bad.size() << " of " << checked << " chunks"
              << (checked < chunks ? " checked" : "") << " unreadable\n";
    return 1;
}

}  // namespace

/// Whether chunk `i` is a special chunk (zeros, NaN, uninitialized, a repeated value), its
/// header read and its size checked against the array's chunks. \throws FormatError
bool special_checked(const storage::Frame& frame, std::int64_t i, const AnyArray& arr) {
    const storage::StoredChunk c = frame.chunk_unchecked(i);
    std::int64_t nbytes = -1;
    if (c.index_only()) {
        if (c.special == codec::Special::none) {
            return false;
        }
    } else {
        const format::ChunkHeader h = format::read_chunk_header(c.bytes);
        if (h.special() == 0) {
            return false;
        }
        nbytes = h.nbytes;
    }
    if (arr && nbytes >= 0 && nbytes != arr.grid().chunk_nbytes()) {
        throw FormatError(frame.name() + ": chunk " + std::to_string(i) + " holds " +
                          std::to_string(nbytes) + " bytes where the array's chunks hold " +
                          std::to_string(arr.grid().chunk_nbytes()));
    }
    return true;
}

FrameCheck check_frame(const std::string& path,
                       const storage::Frame& frame,
                       const AnyArray& leaf,
                       int nthreads,
                       const Deadline* deadline) {
    FrameCheck r;
    for (const std::string& p : frame.checksums().problems) {
        r.bad.push_back(frame.name() + ": " + p);
    }
    for (const auto& name : frame.vlmeta_names()) {
        try {
            (void)frame.vlmeta(name);
        } catch (const Error& e) {
            r.bad.push_back(e.what());
        }
    }
    AnyArray arr;
    try {
        OpenOptions o = with_settings(OpenOptions{});
        o.nthreads = nthreads;
        o.cache_bytes = 0;
        o.raw_objects = true;        // the chunks as stored, whatever object they make
        o.verify_checksums = false;  // checked chunk by chunk below, each reported
        arr = leaf ? leaf : AnyArray::open(path, o);
    } catch (const UnsupportedError&) {
        // Not an array (variable-size chunks): decode chunk by chunk.
    }
    // Every chunk, whatever the ones before it hold: all corrupt ones are named.
    r.chunks = frame.nchunks();
    ProgressBar bar("verify", r.chunks, arr ? static_cast<double>(arr.grid().chunk_nbytes()) : 1.0);
    std::vector<std::uint8_t> buf;
    for (std::int64_t i = 0; i < r.chunks; ++i) {
        if (deadline != nullptr && deadline->passed()) {
            break;
        }
        ++r.checked;
        try {
            std::string mismatch = frame.check_chunk(i);
            if (!mismatch.empty()) {
                throw FormatError(std::move(mismatch));
            }
            if (special_checked(frame, i, arr)) {
                // Nothing stored beyond its header: checked without filling a chunk, so that
                // verify costs what is stored, not what a file claims (terabytes of zeros).
            } else if (arr) {
                const Box b = arr.grid().chunk_box(i);
                buf.resize(static_cast<std::size_t>(b.size() * arr.itemsize()));
                arr.read(b, buf.data(), buf.size());
            } else {
                (void)frame.decode_chunk(i, nthreads > 0 ? nthreads : 1);
            }
        } catch (const Error& e) {
            r.bad.push_back(e.what());
            ++r.bad_chunks;
        }
        bar.update(i + 1);
    }
    r.nbytes = arr ? arr.nbytes() : frame.header().nbytes;
    r.cbytes = frame.chunk_bytes();
    return r;
}

int cmd_verify(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--nthreads", "--max-seconds"}, {"--help"});
    if (a.has("--help")) {
        std::cout << kHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    const std::string path = a.positional[0];
    if (const std::string kind = bridged_kind(path); !kind.empty()) {
        return verify_bridged(path, kind, a);
    }
    const int nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    const Deadline deadline(a);
    std::optional<storage::Frame> own;
    AnyArray leaf;
    // Unchecked: a broken checksum table is reported with everything else.
    const storage::Frame& frame = input_frame(path, own, leaf, false);
    const FrameCheck r = check_frame(path, frame, leaf, nthreads, &deadline);
    const storage::ChecksumReport sums = frame.checksums();
    if (r.bad.empty() && r.checked < r.chunks) {
        std::cout << deadline.reached() << redact_secrets(path) << ": " << r.checked << " of "
                  << r.chunks << " chunks checked, nothing wrong in them; the rest unchecked\n";
        return kExitStopped;
    }
    if (r.bad.empty()) {
        std::cout << "ok: " << redact_secrets(path) << ": " << r.chunks << " chunks, "
                  << sizes_text(r.nbytes, r.cbytes) << "; " << limits(sums) << "\n";
        return 0;
    }
    for (const std::string& why : r.bad) {
        std::cout << why << "\n";
    }
    if (r.checked < r.chunks) {
        std::cout << deadline.reached() << r.checked << " of " << r.chunks << " chunks checked\n";
    }
    std::cout << "bad: " << redact_secrets(path) << ": " << r.bad_chunks << " of "
              << (r.checked < r.chunks ? r.checked : r.chunks) << " chunks"
              << (r.checked < r.chunks ? " checked" : "") << " corrupt";
    if (r.bad.size() > static_cast<std::size_t>(r.bad_chunks)) {
        std::cout << (sums.problems.empty() ? ", and vlmetalayers" : ", and its metadata");
    }
    std::cout << "\n";
    return 1;
}

}  // namespace b2nd::cli
