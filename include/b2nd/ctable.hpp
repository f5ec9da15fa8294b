// python-blosc2's CTable, read: a table of typed columns kept in a TreeStore (.b2d or .b2z).
//
//   auto t = b2nd::CTable::open("table.b2z");
//   for (const b2nd::CTableColumn& c : t.columns()) { ... c.name, c.kind, c.dtype ... }
//   b2nd::NDArray<double> score = t.column("score").as<double>();   // deleted rows included
//   std::vector<bool> live = t.valid_rows();                          // which rows are live
//   b2nd::UTF8Array names = t.utf8_column("name");
//
// The layout (python-blosc2 4.x, ctable_storage.py, schema_compiler.py):
//   /_meta               a super-chunk whose vlmeta holds kind = "ctable", version, and the
//                        schema as JSON text ({version, columns: [{name, kind, ...}], n_rows...})
//   /_valid_rows         bool, one per physical row: false where a row was deleted
//   /_cols/NAME          a column; NAME percent-encoded per segment, dots nest ("a.b" -> a/b)
//   /_cols/NAME.utf8     the bytes of a utf8 column (its offsets at NAME)
//   /_cols/NAME.notnull  bool, false where a mask-nullable column holds a null (absent: none)
//   /_cols/NAME_dict     a dictionary column's values (a BatchArray; its codes, int32, at NAME,
//                        the null code for a null)
// Columns hold every physical row, deleted ones included, as stored. Computed columns (an
// expression over other columns, or Python code) are named and refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/store.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

/// One column of a CTable, as its schema describes it.
struct CTableColumn {
    std::string name;  ///< the logical name ("a.b" for nested fields)
    /// The schema kind: "int64", "float32", "string", "utf8", "dictionary", "vlstring"...;
    /// "computed" for a computed column.
    std::string kind;
    std::string key;        ///< where it is stored ("/_cols/NAME"); empty for computed columns
    std::string dtype;      ///< the stored dtype string of a fixed-width column, else ""
    bool nullable = false;  ///< whether the column may hold nulls
    /// "mask" (NAME.notnull), "sentinel", "code -1" (a dictionary's null code), or "" when not
    /// nullable.
    std::string null_storage;
    Value schema;  ///< the column's schema entry, as stored
};

/// python-blosc2's CTable (read): a table whose columns are arrays of a store, one per
/// column, described by the table's schema.
class CTable {
public:
    CTable() = default;
    /// The CTable at the root of a .b2d directory or .b2z file. \throws FormatError naming the
    /// file when it is no CTable (no /_meta with kind "ctable") or its schema is damaged
    static CTable open(const std::string& path);
    /// The CTable whose /_meta is at `prefix` + "/_meta" in an open store.
    static CTable open(const Store& store, const std::string& prefix = "/");
    /// Whether the store holds a CTable at `prefix`.
    static bool is_ctable(const Store& store, const std::string& prefix = "/");

    /// The store holding the table.
    const Store& store() const { return store_; }
    /// The schema as stored (JSON text) and parsed.
    const std::string& schema_json() const { return schema_json_; }
    /// The table's schema, as stored.
    const Value& schema() const { return schema_; }
    /// The columns, in stored order.
    const std::vector<CTableColumn>& columns() const { return columns_; }
    /// One column's description. \throws UsageError for an unknown name
    const CTableColumn& column_info(const std::string& name) const;

    /// Physical rows (the columns' length; deleted rows included).
    std::int64_t physical_rows() const;
    /// Live rows (true entries of valid_rows()).
    std::int64_t nrows() const;
    /// One entry per physical row: false for deleted rows.
    std::vector<bool> valid_rows() const;

    /// A fixed-width column (or a dictionary column's codes) as the array it is, read-only.
    /// \throws UsageError for an unknown name or a column stored otherwise (utf8, variable
    /// length); UnsupportedError naming a computed column
    AnyArray column(const std::string& name) const;
    /// A utf8 column's strings.
    UTF8Array utf8_column(const std::string& name) const;
    /// A mask-nullable column's validity (true: not null); nullopt when every row is valid.
    std::optional<AnyArray> notnull(const std::string& name) const;
    /// A dictionary column's values (its codes are column(name)).
    BatchArray dictionary_values(const std::string& name) const;
    /// A variable-length column's items (vlstring, vlbytes, object, list kinds): one per row.
    std::vector<Value> items(const std::string& name, std::int64_t start, std::int64_t stop) const;

private:
    Store store_;
    std::string prefix_;
    std::string schema_json_;
    Value schema_;
    std::vector<CTableColumn> columns_;
    std::string where(const std::string& name) const;
    const CTableColumn& stored(const std::string& name, const char* want) const;
};

}  // namespace b2nd
