//! Sortable column headers: the link a header sorts by (the other way round when the list
//! already sorts by it) and its `aria-sort`. One struct for every sortable table.

/// How a list is sorted, and how to link to its other orders.
pub struct Sorting {
    /// The list's path.
    pub path: String,
    /// The list's filters, already encoded (`a=1&b=2`), without sort, direction or page: a new
    /// order starts again at page 1.
    pub filters: String,
    /// The column sorted by (a stable key), empty for the list's own order.
    pub key: String,
    pub desc: bool,
}

impl Sorting {
    /// The header link of column `key`.
    pub fn href(&self, key: &str) -> String {
        let desc = if self.key == key && !self.desc {
            "1"
        } else {
            ""
        };
        let sort = crate::web::view::query(&[("sort", key), ("desc", desc)]);
        match self.filters.as_str() {
            "" => format!("{}?{sort}", self.path),
            f => format!("{}?{f}&{sort}", self.path),
        }
    }

    /// `aria-sort` of column `key`.
    pub fn aria(&self, key: &str) -> &'static str {
        match (self.key == key, self.desc) {
            (false, _) => "none",
            (true, false) => "ascending",
            (true, true) => "descending",
        }
    }

    /// The arrow after the header of the column sorted by.
    pub fn mark(&self, key: &str) -> &'static str {
        match (self.key == key, self.desc) {
            (false, _) => "",
            (true, false) => " ▲",
            (true, true) => " ▼",
        }
    }

    /// The filters, sort and direction as a query string: what the pager keeps on its links.
    pub fn query(&self) -> String {
        let sort = crate::web::view::query(&[
            ("sort", self.key.as_str()),
            ("desc", if self.desc { "1" } else { "" }),
        ]);
        [self.filters.as_str(), sort.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("&")
    }
}

#[cfg(test)]
mod tests {
    use super::Sorting;

    #[test]
    fn a_header_sorts_by_its_column_then_the_other_way_round_keeping_the_filters() {
        let s = |key: &str, desc| Sorting {
            path: "/x".into(),
            filters: "q=a%20b".into(),
            key: key.into(),
            desc,
        };
        assert_eq!(s("", false).href("age"), "/x?q=a%20b&sort=age");
        assert_eq!(s("age", false).href("age"), "/x?q=a%20b&sort=age&desc=1");
        assert_eq!(s("age", true).href("age"), "/x?q=a%20b&sort=age");
        assert_eq!(s("age", true).aria("age"), "descending");
        assert_eq!(s("age", true).aria("id"), "none");
        let bare = Sorting {
            path: "/x".into(),
            filters: String::new(),
            key: String::new(),
            desc: false,
        };
        assert_eq!(bare.href("id"), "/x?sort=id");
        assert_eq!(bare.query(), "");
        assert_eq!(s("age", true).query(), "q=a%20b&sort=age&desc=1");
    }
}
