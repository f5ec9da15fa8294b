// redact_secrets (error.hpp): the one place that decides what of a text is a secret.
#include "detail/secrets.hpp"

#include <cctype>

#include <b2nd/error.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

namespace detail {

bool secret_name(const std::string& name) {
    std::string n;
    for (const char c : name) {
        n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (const char* word :
         {"token", "password", "passwd", "secret", "credential", "authorization", "api_key",
          "apikey", "access_key", "private_key", "cookie", "signature"}) {
        if (n.find(word) != std::string::npos) {
            return true;
        }
    }
    return n == "auth" || n == "pass" || n == "pwd";
}

}  // namespace detail

namespace {

bool url_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f && c != '"' && c != '\'' && c != '<' && c != '>' && c != '`';
}

bool scheme_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

/// Every URL in `text` without its user information, query and fragment.
std::string redact_urls(const std::string& text) {
    std::string out;
    std::size_t i = 0;
    for (std::size_t at; (at = text.find("://", i)) != std::string::npos;) {
        std::size_t start = at;
        while (start > i && scheme_char(text[start - 1])) {
            --start;
        }
        std::size_t end = at + 3;
        while (end < text.size() && url_char(text[end])) {
            ++end;
        }
        out.append(text, i, start - i);
        if (start == at) {  // no scheme: not a URL
            out.append(text, at, end - at);
        } else {
            out += storage::redacted_url(text.substr(start, end - start));
        }
        i = end;
    }
    out.append(text, i, std::string::npos);
    return out;
}

/// The end of the quoted string starting at `open` (its closing quote), or npos.
std::size_t closing_quote(const std::string& t, std::size_t open) {
    for (std::size_t k = open + 1; k < t.size(); ++k) {
        if (t[k] == '\\') {
            ++k;
        } else if (t[k] == t[open]) {
            return k;
        }
    }
    return std::string::npos;
}

/// "name": "value" and 'name': 'value' with a secret's name: the value becomes <redacted>.
std::string redact_fields(const std::string& t) {
    std::string out;
    std::size_t i = 0;
    while (i < t.size()) {
        const std::size_t open = t.find_first_of("\"'", i);
        if (open == std::string::npos) {
            break;
        }
        const std::size_t close = closing_quote(t, open);
        if (close == std::string::npos) {
            break;
        }
        std::size_t k = close + 1;
        while (k < t.size() && t[k] == ' ') {
            ++k;
        }
        const bool field = k < t.size() && (t[k] == ':' || t[k] == '=');
        if (field) {
            ++k;
            while (k < t.size() && t[k] == ' ') {
                ++k;
            }
        }
        if (field && k < t.size() && (t[k] == '"' || t[k] == '\'') &&
            detail::secret_name(t.substr(open + 1, close - open - 1))) {
            const std::size_t vclose = closing_quote(t, k);
            if (vclose != std::string::npos) {
                out.append(t, i, k + 1 - i);
                out += "<redacted>";
                i = vclose;  // the closing quote is kept
                continue;
            }
        }
        out.append(t, i, close + 1 - i);
        i = close + 1;
    }
    out.append(t, i, std::string::npos);
    return out;
}

/// "Bearer abc..." (an Authorization header's value) becomes "Bearer <redacted>".
std::string redact_bearer(const std::string& t) {
    std::string out;
    std::size_t i = 0;
    for (std::size_t at; (at = t.find("Bearer ", i)) != std::string::npos;) {
        std::size_t end = at + 7;
        while (end < t.size() && url_char(t[end])) {
            ++end;
        }
        out.append(t, i, at + 7 - i);
        out += end > at + 7 ? "<redacted>" : "";
        i = end;
    }
    out.append(t, i, std::string::npos);
    return out;
}

}  // namespace

std::string redact_secrets(const std::string& text) {
    if (text.find("://") == std::string::npos && text.find_first_of("\"'") == std::string::npos &&
        text.find("Bearer ") == std::string::npos) {
        return text;
    }
    return redact_bearer(redact_fields(redact_urls(text)));
}

Value Value::redacted() const {
    return redacted_as(true);
}

Value Value::urls_redacted() const {
    return redacted_as(false);
}

Value Value::redacted_as(bool by_name) const {
    switch (type_) {
        case Type::string:
            return Value(redact_secrets(str_));
        case Type::array: {
            Array a;
            for (const Value& v : array()) {
                a.push_back(v.redacted_as(by_name));
            }
            return Value(std::move(a));  // a tuple keeps its head
        }
        case Type::map: {
            Map m;
            for (const auto& [k, v] : entries()) {
                const bool secret =
                    by_name && k.type() == Type::string && detail::secret_name(k.as<std::string>());
                m.emplace_back(k, secret ? Value("<redacted>") : v.redacted_as(by_name));
            }
            return map(std::move(m));
        }
        case Type::ext:
            if (is_reference()) {
                try {
                    return Value::reference(reference().redacted_as(by_name));
                } catch (const Error&) {
                    return *this;  // not a map inside: shown as its bytes
                }
            }
            return *this;
        default:
            return *this;
    }
}

}  // namespace b2nd
