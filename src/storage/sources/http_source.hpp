// Internal: the byte source of a remote file (http.hpp), and batches of reads over several
// sources (the chunk files of a remote sparse frame go out together).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>

#include "http_client.hpp"

namespace b2nd::storage::detail {

class HttpSource final : public ByteSource {
public:
    /// Opens `url`: one request fetches the head of the file and learns its size and identity.
    /// `name`: how messages name it (empty: the URL without credentials or query; an S3 object:
    /// its s3:// URL).
    HttpSource(std::shared_ptr<const HttpClient> client, std::string url, std::string name = {});
    /// A file next to another (a sparse frame's chunk file): no request yet, and no size
    /// (size() is UINT64_MAX; reads say how much there was through RangeInto::got).
    HttpSource(std::shared_ptr<const HttpClient> client,
               std::string url,
               std::string name,
               bool unopened);

    std::uint64_t size() const override;
    const std::string& name() const override { return name_; }
    SourceBytes read(std::uint64_t offset, std::uint64_t n) const override;
    bool remote() const noexcept override { return true; }
    void read_into(const std::vector<RangeInto>& ranges) const override;
    std::string stamp() const override;
    TransferStats transfers() const override { return client_->stats(); }
    /// An object store's ETag, checked in every answer (S3): no probe needed.
    bool strong_identity() const noexcept override {
        return client_->strong_etag() && !id_.etag.empty();
    }

    /// The file `name` in the same directory (URL path), sharing the connections.
    std::shared_ptr<const ByteSource> sibling(const std::string& name) const override;
    /// The same URL opened afresh (its identity learned again).
    std::shared_ptr<const ByteSource> reopen() const override;
    /// One client: its files' ranges go out in one batch.
    const void* batch_key() const noexcept override { return client_.get(); }
    void read_batch(const std::vector<SourceRanges*>& batch) const override;
    const std::string& url() const noexcept { return url_; }
    const std::shared_ptr<const HttpClient>& client() const noexcept { return client_; }
    /// The identity answers must have (read_many batches with it).
    RemoteIdentity* identity() const noexcept { return &id_; }

private:
    /// This file's ranges to fetch (url, name, identity), no pieces yet.
    FileRanges ranges() const;
    /// The kept bytes holding [offset, offset + n), if any.
    std::shared_ptr<const std::vector<std::uint8_t>> kept(std::uint64_t offset,
                                                          std::uint64_t n,
                                                          std::uint64_t& at) const;

    std::shared_ptr<const HttpClient> client_;
    std::string url_;
    std::string name_;     // the URL without credentials or query
    bool opened_ = false;  // the first request was made (size and identity known)
    mutable RemoteIdentity id_;
    mutable std::mutex mutex_;  // kept_
    /// Ranges fetched by read(), kept: the head, the frame's index and trailer, and the few
    /// small reads a frame's parsing makes (chunks go through RemoteChunks, not here).
    mutable std::map<std::uint64_t, std::shared_ptr<const std::vector<std::uint8_t>>> kept_;
};

}  // namespace b2nd::storage::detail
