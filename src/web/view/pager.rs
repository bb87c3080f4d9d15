//! Page numbers for long lists: "page 3 of 18,000", the pages either side, and a box to jump to
//! any page. One struct for every list, rendered by `templates/_pager.html`.

use crate::web::view::link;

/// One page link of a [`Pager`].
pub struct PageLink {
    pub n: i64,
    pub href: String,
    pub current: bool,
    /// Pages left out here ("…").
    pub gap: bool,
}

pub struct Pager {
    /// The list's path.
    pub path: String,
    /// The list's other query pairs, already encoded (`a=1&b=2`), kept on every page link.
    pub query: String,
    pub page: i64,
    pub pages: i64,
    /// The element htmx swaps with a page (its id), or empty for plain links.
    pub target: &'static str,
}

impl Pager {
    /// Which page `page` asks for among `pages`, for a list of `total` rows `per` to a page.
    pub fn pages(total: i64, per: i64) -> i64 {
        ((total + per - 1) / per).max(1)
    }

    /// The link to a page (askama hands loop items by reference or value: both are taken).
    pub fn href(&self, page: impl std::borrow::Borrow<i64>) -> String {
        let page = page.borrow().to_string();
        match self.query.as_str() {
            "" => link(&self.path, &[("page", &page)]),
            q => format!("{}?{q}&page={page}", self.path),
        }
    }

    /// The page links shown: the first, the last, and two either side of this one, with gaps.
    pub fn links(&self) -> Vec<PageLink> {
        self.numbers()
            .into_iter()
            .map(|n| PageLink {
                n: n.unwrap_or(0),
                href: n.map(|n| self.href(n)).unwrap_or_default(),
                current: n == Some(self.page),
                gap: n.is_none(),
            })
            .collect()
    }

    /// The page numbers shown: the first, the last, and two either side of this one; None marks
    /// a gap.
    pub fn numbers(&self) -> Vec<Option<i64>> {
        let mut out: Vec<Option<i64>> = Vec::new();
        let mut last = 0;
        for n in 1..=self.pages {
            let near = (n - self.page).abs() <= 2;
            if n == 1 || n == self.pages || near {
                if n > last + 1 {
                    out.push(None);
                }
                out.push(Some(n));
                last = n;
            } else if n > self.page + 2 {
                // Jump straight to the last page: a list of a million pages costs nothing.
                if self.pages > n {
                    out.push(None);
                    out.push(Some(self.pages));
                }
                break;
            }
        }
        out
    }

    /// The query pairs other than the page, for the jump box's hidden fields.
    pub fn hidden(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .filter(|(k, _)| k != "page")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Pager;

    fn pager(page: i64, pages: i64) -> Pager {
        Pager {
            path: "/x".into(),
            query: "q=a%20b".into(),
            page,
            pages,
            target: "",
        }
    }

    #[test]
    fn a_long_list_shows_its_ends_and_the_pages_near_this_one() {
        assert_eq!(
            pager(1, 18000).numbers(),
            [Some(1), Some(2), Some(3), None, Some(18000)]
        );
        assert_eq!(
            pager(50, 18000).numbers(),
            [
                Some(1),
                None,
                Some(48),
                Some(49),
                Some(50),
                Some(51),
                Some(52),
                None,
                Some(18000)
            ]
        );
        assert_eq!(pager(2, 3).numbers(), [Some(1), Some(2), Some(3)]);
        assert_eq!(pager(1, 1).numbers(), [Some(1)]);
        assert_eq!(pager(3, 9).href(4), "/x?q=a%20b&page=4");
        assert_eq!(pager(3, 9).hidden(), [("q".to_string(), "a b".to_string())]);
    }
}
