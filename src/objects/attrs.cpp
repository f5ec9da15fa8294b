#include <b2nd/attrs.hpp>

#include "../detail/text.hpp"

namespace b2nd {

std::string Attrs::context(const std::string& name) const {
    return detail::quoted_path(a_.path()) + ": attribute '" + name + "': ";
}

std::optional<Value> Attrs::find(const std::string& name) const {
    const auto bytes = a_.vlmeta(name);
    if (!bytes) {
        return std::nullopt;
    }
    return Value::from_msgpack({bytes->data(), bytes->size()}, context(name) + "vlmeta");
}

Value Attrs::get(const std::string& name) const {
    std::optional<Value> v = find(name);
    if (!v) {
        throw UsageError(context(name) + "no such attribute");
    }
    return std::move(*v);
}

void Attrs::set(const std::string& name, const Value& value) {
    const std::vector<std::uint8_t> bytes = value.to_msgpack();
    a_.set_vlmeta(name, {bytes.data(), bytes.size()});
}

std::vector<Attrs::value_type> Attrs::items() const {
    std::vector<value_type> out;
    for (const std::string& name : names()) {
        out.emplace_back(name, get(name));
    }
    return out;
}

Value metalayer_value(const AnyArray& a, const std::string& name) {
    const auto bytes = a.metalayer(name);
    const std::string where = detail::quoted_path(a.path()) + ": metalayer '" + name + "'";
    if (!bytes) {
        throw UsageError(where + ": no such metalayer");
    }
    return Value::from_msgpack({bytes->data(), bytes->size()}, where);
}

}  // namespace b2nd
