// The b2nd tool: an array printed as nested brackets while its items arrive in C order, so that
// output of any size goes out in pieces (memory bounded by a buffer), in NumPy's layout or as
// JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <b2nd/shape.hpp>

namespace b2nd::cli {

class NestedPrinter {
public:
    enum class Style {
        numpy,  ///< print(ndarray): rows wrapped at 75 columns, blank lines between blocks
        json    ///< nested arrays on one line, items separated by ", "
    };
    /// `shape`: the items that will be given; `cut[d]` >= 0 puts "..." after that many along
    /// axis d (NumPy's summary; numpy style only).
    NestedPrinter(std::ostream& out, Style style, Shape shape, std::vector<std::int64_t> cut);
    /// The next item, as it should appear.
    void item(const std::string& word);
    /// Closes the brackets and writes a newline; everything is flushed.
    void finish();

private:
    void put(const std::string& text);  // text without newlines
    void newlines(std::size_t n, std::size_t indent);
    void word_in_row(const std::string& word);  // an item or "..." after the first of a row
    void flush_if_large();
    void empty_json(std::size_t d);  // the brackets of an empty array from axis d on

    std::ostream& out_;
    Style style_;
    Shape shape_;
    std::vector<std::int64_t> cut_;
    std::vector<std::int64_t> at_;  // the next item's position
    bool started_ = false;
    std::string buf_;
    std::size_t column_ = 0;          // of the line being written
    std::size_t pending_spaces_ = 0;  // trailing blanks, dropped before a newline
};

}  // namespace b2nd::cli
