// b2nd::Attrs: an array's attributes, python-blosc2's convention: each is one vlmeta entry (a
// variable-length metalayer) holding one msgpack value.
//
// clang-format off
//   auto a = b2nd::AnyArray::open("t.b2nd", {.writable = true});
//   a.attrs()["units"] = "K";
//   a.attrs()["calib"] = b2nd::Value::map({{"offset", -273.15}, {"factor", 0.01}});
//   double off = a.attrs().get<b2nd::Value>("calib")["offset"].as<double>();
//   for (const auto& [name, value] : a.attrs()) std::cout << name << " = " << value.to_json();
// clang-format on
//
// Each read decodes the entry as it is stored now; a write replaces one entry in one commit.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

/// An array's attributes: its vlmeta entries as msgpack values, as python-blosc2's
/// `array.vlmeta` holds them (AnyArray::attrs()).
class Attrs {
public:
    using value_type = std::pair<std::string, Value>;  ///< a name and its value

    /// The attributes of `array` (its handle: changes go to the file at once).
    explicit Attrs(AnyArray array) : a_(std::move(array)) {}

    /// Names, in the order the vlmeta stores them.
    std::vector<std::string> names() const { return a_.vlmeta_names(); }
    /// Whether `name` is set.
    bool contains(const std::string& name) const { return a_.vlmeta(name).has_value(); }
    /// How many attributes there are.
    std::size_t size() const { return a_.vlmeta_names().size(); }
    /// Whether there are none.
    bool empty() const { return size() == 0; }

    /// The value of `name`. \throws UsageError when absent; FormatError (naming the file and the
    /// attribute) when its bytes are not one msgpack value
    Value get(const std::string& name) const;
    /// The value of `name` as T (Value::as). \throws UsageError naming the file, the attribute
    /// and both types on a mismatch
    template <class T>
    T get(const std::string& name) const {
        return convert<T>(name, get(name));
    }
    /// The same, or `fallback` when there is no such attribute.
    template <class T>
    T get_or(const std::string& name, T fallback) const {
        const std::optional<Value> v = find(name);
        return v ? convert<T>(name, *v) : fallback;
    }
    /// The value of `name`, or nothing when absent. \throws FormatError when it is not msgpack
    std::optional<Value> find(const std::string& name) const;
    /// Stores `value` as msgpack under `name` (the array must be writable).
    void set(const std::string& name, const Value& value);
    /// Removes `name`; false when there was none.
    bool erase(const std::string& name) { return a_.delete_vlmeta(name); }

    /// attrs["units"] = "K"; std::string u = attrs["units"].as<std::string>();
    class Entry {
    public:
        /// Stores `v` under the entry's name.
        Entry& operator=(const Value& v) {
            attrs_->set(name_, v);
            return *this;
        }
        /// The entry's value. \throws UsageError when absent
        Value value() const { return attrs_->get(name_); }
        template <class T>
        /// The entry's value as T (Value::as). \throws UsageError when absent or of another type
        T as() const {
            return attrs_->get<T>(name_);
        }
        /// Whether the entry is set.
        bool exists() const { return attrs_->contains(name_); }

    private:
        friend class Attrs;
        Entry(Attrs* attrs, std::string name) : attrs_(attrs), name_(std::move(name)) {}
        Attrs* attrs_;
        std::string name_;
    };
    /// An entry to read or assign: attrs["units"] = "K".
    Entry operator[](const std::string& name) { return Entry(this, name); }

    /// Every attribute with its value, in stored order.
    std::vector<value_type> items() const;

    /// Iterates over a snapshot of items() taken at begin().
    class const_iterator {
    public:
        using value_type = Attrs::value_type;                 ///< a name and its value
        using reference = const value_type&;                  ///< see value_type
        using pointer = const value_type*;                    ///< see value_type
        using difference_type = std::ptrdiff_t;               ///< see value_type
        using iterator_category = std::forward_iterator_tag;  ///< see value_type
        /// The current item.
        reference operator*() const { return (*items_)[i_]; }
        /// The current item.
        pointer operator->() const { return &(*items_)[i_]; }
        /// The next item.
        const_iterator& operator++() {
            ++i_;
            return *this;
        }
        /// Same position.
        bool operator==(const const_iterator& o) const { return i_ == o.i_; }
        /// Not the same position.
        bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

    private:
        friend class Attrs;
        const_iterator(std::shared_ptr<const std::vector<value_type>> items, std::size_t i)
            : items_(std::move(items)), i_(i) {}
        std::shared_ptr<const std::vector<value_type>> items_;
        std::size_t i_;
    };
    /// The first item (a snapshot of items() is taken here).
    const_iterator begin() const {
        auto all = std::make_shared<const std::vector<value_type>>(items());
        end_ = all->size();
        return const_iterator(std::move(all), 0);
    }
    /// Past the last item.
    const_iterator end() const { return const_iterator(nullptr, end_); }

private:
    template <class T>
    T convert(const std::string& name, const Value& v) const {
        try {
            return v.as<T>();
        } catch (const UsageError& e) {
            throw UsageError(context(name) + e.what());
        }
    }
    std::string context(const std::string& name) const;

    AnyArray a_;
    mutable std::size_t end_ = 0;
};

/// A user metalayer (python-blosc2 stores msgpack in them too) decoded as a Value.
/// \throws UsageError when absent; FormatError when its bytes are not one msgpack value
Value metalayer_value(const AnyArray& a, const std::string& name);

}  // namespace b2nd
