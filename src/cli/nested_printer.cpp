#include "nested_printer.hpp"

namespace b2nd::cli {

namespace {

constexpr std::size_t kLineWidth = 75;  // NumPy's default linewidth
constexpr std::size_t kFlushBytes = 1 << 16;

/// Columns of UTF-8 text as NumPy counts them (len() of a Python str: code points, not bytes).
std::size_t columns(const std::string& text, std::size_t n) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < n && i < text.size(); ++i) {
        c += (static_cast<unsigned char>(text[i]) & 0xc0) != 0x80 ? 1U : 0U;
    }
    return c;
}

}  // namespace

NestedPrinter::NestedPrinter(std::ostream& out,
                             Style style,
                             Shape shape,
                             std::vector<std::int64_t> cut)
    : out_(out),
      style_(style),
      shape_(std::move(shape)),
      cut_(std::move(cut)),
      at_(shape_.size(), 0) {
    cut_.resize(shape_.size(), -1);
}

void NestedPrinter::put(const std::string& text) {
    const std::size_t end = text.find_last_not_of(' ');
    if (end == std::string::npos) {
        pending_spaces_ += text.size();
        return;
    }
    buf_.append(pending_spaces_, ' ');
    buf_.append(text, 0, end + 1);
    column_ += pending_spaces_ + columns(text, end + 1);
    pending_spaces_ = text.size() - end - 1;
}

void NestedPrinter::newlines(std::size_t n, std::size_t indent) {
    pending_spaces_ = 0;  // as NumPy, no trailing blanks
    buf_.append(n, '\n');
    column_ = 0;
    pending_spaces_ = indent;
}

void NestedPrinter::word_in_row(const std::string& word) {
    if (style_ == Style::json) {
        put(", " + word);
        return;
    }
    // After a space, or on a new line indented past the brackets when the line would pass
    // NumPy's limit there (the line width less one column per bracket that may close it).
    const std::size_t d = shape_.size() - 1;
    if (column_ + pending_spaces_ + 1 + columns(word, word.size()) > kLineWidth - 1 - d) {
        newlines(1, d + 1);
    } else {
        pending_spaces_ += 1;
    }
    put(word);
}

void NestedPrinter::flush_if_large() {
    if (buf_.size() >= kFlushBytes) {
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }
}

void NestedPrinter::item(const std::string& word) {
    const std::size_t nd = shape_.size();
    if (nd == 0) {
        put(word);
        return;
    }
    if (!started_) {
        put(std::string(nd, '['));
        put(word);
        started_ = true;
    } else {
        // The outermost axis whose position moved: deeper rows closed and opened again.
        std::size_t d = nd - 1;
        while (d > 0 && at_[d] == 0) {
            --d;
        }
        if (d == nd - 1) {
            word_in_row(word);
        } else {
            put(std::string(nd - 1 - d, ']'));
            if (style_ == Style::json) {
                put(", " + std::string(nd - 1 - d, '[') + word);
            } else {
                const std::size_t blank = nd - d - 1;  // blank lines grow with the depth
                if (cut_[d] >= 0 && at_[d] == cut_[d]) {
                    newlines(blank, d + 1);
                    put("...");
                }
                newlines(blank, d + 1);
                put(std::string(nd - 1 - d, '[') + word);
            }
        }
    }
    if (style_ == Style::numpy && cut_[nd - 1] >= 0 && at_[nd - 1] + 1 == cut_[nd - 1]) {
        word_in_row("...");
    }
    // The next position, in C order.
    for (std::size_t d = nd; d-- > 0;) {
        if (++at_[d] < shape_[d] || d == 0) {
            break;
        }
        at_[d] = 0;
    }
    flush_if_large();
}

void NestedPrinter::empty_json(std::size_t d) {
    buf_ += '[';
    if (shape_[d] > 0 && d + 1 < shape_.size()) {
        for (std::int64_t i = 0; i < shape_[d]; ++i) {
            buf_ += i > 0 ? ", " : "";
            empty_json(d + 1);
            flush_if_large();
        }
    }
    buf_ += ']';
}

void NestedPrinter::finish() {
    if (!shape_.empty() && started_) {
        put(std::string(shape_.size(), ']'));
    } else if (!shape_.empty() && style_ == Style::numpy) {
        put("[]");  // NumPy prints every empty array so
    } else if (!shape_.empty()) {
        empty_json(0);  // [[], []] for shape (2, 0)
    }
    pending_spaces_ = 0;
    buf_ += '\n';
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    out_.flush();
}

}  // namespace b2nd::cli
