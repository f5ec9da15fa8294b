// Internal: a map that keeps its most recently used entries (open chunk files of a sparse frame,
// a Zarr array's shard indexes). Not thread-safe: its owner's lock guards it.
#pragma once

#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace b2nd::detail {

template <class K, class V>
class LruMap {
public:
    /// The value of `k`, now the most recently used; null when absent.
    const V* find(const K& k) {
        auto it = map_.find(k);
        if (it == map_.end()) {
            return nullptr;
        }
        order_.splice(order_.begin(), order_, it->second.second);
        return &it->second.first;
    }
    /// Keeps `v` for `k` (unless `k` is there already), then drops the least recently used
    /// entries beyond `capacity` (at least one stays).
    void put(const K& k, V v, std::size_t capacity) {
        if (map_.count(k) == 0) {
            order_.push_front(k);
            map_.emplace(k, std::make_pair(std::move(v), order_.begin()));
        }
        while (map_.size() > (capacity == 0 ? 1 : capacity)) {
            map_.erase(order_.back());
            order_.pop_back();
        }
    }
    void erase(const K& k) {
        auto it = map_.find(k);
        if (it != map_.end()) {
            order_.erase(it->second.second);
            map_.erase(it);
        }
    }
    void clear() {
        map_.clear();
        order_.clear();
    }

private:
    std::list<K> order_;  // most recently used first
    std::unordered_map<K, std::pair<V, typename std::list<K>::iterator>> map_;
};

}  // namespace b2nd::detail
