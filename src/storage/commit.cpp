// The commit protocol: how a frame changes from one state to the next, for both kinds, in one
// place (DESIGN.md section 5). A commit is a FrameCommit (frame_impl.hpp): the new offsets index,
// the chunks to store with it, the metalayers and vlmetalayers. Frame::Impl::apply builds it
// from a FrameEdit; commit() below writes it.
//
// Order (the kinds supply the steps marked *, and nothing else):
//   1. The exclusive lock of the sidecar (NAME.b2lock, c-blosc2's protocol; none without
//      locking): other handles take their snapshots between commits, never during one, and
//      only one writer commits at a time (the writer byte, taken at open, keeps other writers
//      out for the whole session).
//   2. * place_chunks: the new chunks go where the kind keeps them, never over bytes the current
//      frame uses. Contiguous: after the live frame and after anything staged (for an
//      exclusive writer, over the index and trailer the last commit left). Sparse: new
//      NNNNNNNN.chunk files under fresh numbers, each written under a temporary name and
//      renamed.
//   3. The image: header fields (nbytes, metalayers, has_vlmetalayers), the encoded offsets
//      index, the trailer with the vlmetalayers. Anything every commit must carry (a checksum
//      table, for one) is added here, once, for both kinds.
//      * write_image: everything but the commit point. Contiguous: index and trailer after the
//      chunks (an empty frame: a whole new file under a temporary name). Sparse:
//      chunks.b2frame.tmp.
//   4. * flush_written, with OpenOptions::durable only: fsync of what 2 and 3 wrote (contiguous:
//      the file; sparse: the new chunk files, chunks.b2frame.tmp and the directory).
//   5. * publish_image, the commit point. Contiguous: one pwrite of the header from byte 16
//      (frame_len, nbytes, cbytes, has_vlmetalayers, metalayers); an empty frame, the rename of
//      the new file. Sparse: the rename of chunks.b2frame.tmp over chunks.b2frame. A crash before
//      it leaves the old frame, after it the new one.
//   6. * flush_published, durable only: fsync of the header (contiguous) or of the directory.
//   7. * adopt_image: this handle maps and reads the new frame. Contiguous exclusive writers
//      truncate what the new frame no longer reaches; sparse frames set aside the files of
//      replaced chunks (removed at once without a sidecar, else when the reader table says no
//      snapshot names them).
//   8. The generation bump in the sidecar, and this handle's entry in its reader table.
//   9. The lock is released; the staging generation ends (chunks staged but not named are
//      dropped).
//  10. * after_commit: reclaiming what no reader needs (contiguous: auto-compaction; sparse:
//      removal of set-aside files).
//
// A failure anywhere before 5 leaves the frame as it was; the bytes written are dead space
// (contiguous) or unnamed files (sparse) that later commits and compaction reclaim.
#include <b2nd/format/frame_header.hpp>

#include "block_seals.hpp"
#include "frame_impl.hpp"

namespace b2nd::storage {

void Frame::Impl::commit(FrameCommit c) {
    CommitSteps& kind = require_writable("commit");
    {
        detail::Sidecar::Lock lock = commit_lock();  // 1
        detail::ChecksumTable table;
        if (c.checksums) {  // the new chunks' digests (and with version 2, their records)
            c.records.assign(c.checksum_version >= 2 ? c.writes.size() : 0, {});
            for (std::size_t k = 0; k < c.writes.size(); ++k) {
                if (c.checksum_version >= 2) {
                    detail::Seal sealed = detail::seal(c.writes[k], c.checksum_version);
                    c.digests[c.slots[k]] = sealed.digest;
                    c.records[k] = std::move(sealed.record);
                } else {
                    c.digests[c.slots[k]] = detail::bytes_digest(c.writes[k]);
                }
            }
        }
        kind.place_chunks(c);  // 2
        CommitImage img;       // 3
        img.header = header;
        img.header.metalayers = c.metalayers;
        img.header.has_vlmetalayers = !c.vlmeta.empty() || c.checksums;
        img.header.nbytes = c.nbytes;
        if (c.nbytes > 0) {
            img.index = encode_index(c.index);
        }
        const std::vector<std::uint8_t> head =
            c.checksums ? format::write_frame_header(img.header) : std::vector<std::uint8_t>();
        img.trailer = detail::trailer_with_checksums(
            {head.data(), head.size()}, {img.index.data(), img.index.size()}, c.vlmeta,
            c.checksums ? &c.digests : nullptr, c.checksum_version, &table);
        kind.write_image(img, c);
        if (flush_behind) {
            flush_behind->finish();  // a staged chunk that could not be flushed stops the commit
        }
        if (options.durable) {
            kind.flush_written();  // 4
        }
        kind.publish_image(img);  // 5
        if (options.durable) {
            kind.flush_published();  // 6
        }
        kind.adopt_image(img);  // 7
        index = std::move(c.index);
        vlmeta = std::move(c.vlmeta);
        checks = detail::Checks::written(c.checksums ? &table : nullptr, options.verify_checksums);
        committed();  // 8
    }
    end_staging(index);   // 9
    kind.after_commit();  // 10
}

void Frame::Impl::end_staging(const std::vector<std::int64_t>& live) {
    if (CommitSteps* k = steps()) {
        k->drop_staged(live);
    }
    ++staging_epoch;
}

}  // namespace b2nd::storage
