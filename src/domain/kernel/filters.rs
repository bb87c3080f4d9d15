//! A list page's WHERE clause built from the filters in use only (so each query can use an
//! index), with its arguments numbered as it goes: shared by the audit log and the orders list.

/// One bound argument.
#[derive(Debug, Clone)]
pub enum Arg {
    Int(i64),
    Text(String),
}

#[derive(Debug, Clone, Default)]
pub struct Where {
    clauses: Vec<String>,
    pub args: Vec<Arg>,
}

impl Where {
    /// `lhs $n`, e.g. `push("a.at >=", Arg::Int(t))`.
    pub fn push(&mut self, lhs: &str, arg: Arg) {
        self.args.push(arg);
        self.clauses.push(format!("{lhs} ${}", self.args.len()));
    }

    /// A clause whose one argument is written `$?` where it goes, e.g. `EXISTS (… s.code = $?)`.
    pub fn clause(&mut self, sql: &str, arg: Arg) {
        self.args.push(arg);
        self.clauses
            .push(sql.replace("$?", &format!("${}", self.args.len())));
    }

    /// A clause without arguments.
    pub fn fixed(&mut self, sql: &str) {
        self.clauses.push(sql.to_string());
    }

    /// Case-blind `LIKE` on `column` with a pattern from `contains_pattern`.
    pub fn like(&mut self, column: &str, pattern: String) {
        self.args.push(Arg::Text(pattern));
        self.clauses.push(format!(
            "LOWER({column}) LIKE ${} ESCAPE '\\'",
            self.args.len()
        ));
    }

    pub fn with(&self, lhs: &str, arg: Arg) -> Where {
        let mut w = self.clone();
        w.push(lhs, arg);
        w
    }

    pub fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// `%text%` for LIKE, with the wildcards of the text itself escaped; `None` for blank text.
pub fn contains_pattern(raw: &str) -> Option<String> {
    let t = raw.trim().to_lowercase();
    if t.is_empty() {
        return None;
    }
    let escaped = t
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    Some(format!("%{escaped}%"))
}

/// Binds a `Where`'s arguments to a query, in order.
#[macro_export]
macro_rules! bind_args {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                $crate::domain::kernel::filters::Arg::Int(i) => q.bind(*i),
                $crate::domain::kernel::filters::Arg::Text(s) => q.bind(s.clone()),
            };
        }
        q
    }};
}

/// Text for LIKE, "contains": `%`, `_` and the escape character itself match only themselves
/// (a search for "50%" finds "50%", not everything). Used with `ESCAPE '\'`.
pub fn like_pattern(s: &str) -> String {
    let mut out = String::from("%");
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}
