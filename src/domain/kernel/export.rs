//! CSV exports (ledger, audit log, import errors): one writer, so the quoting and the spreadsheet
//! guard are the same everywhere. Quoting is the `csv` crate's. Text that a spreadsheet would run
//! as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) gets a leading `'`; numbers are
//! written as numbers, so a column of deltas can still be summed.

/// One cell of an export row.
pub enum Cell<'a> {
    Text(&'a str),
    Num(i64),
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(s: &'a str) -> Self {
        Cell::Text(s)
    }
}

impl<'a> From<&'a String> for Cell<'a> {
    fn from(s: &'a String) -> Self {
        Cell::Text(s)
    }
}

impl From<i64> for Cell<'_> {
    fn from(n: i64) -> Self {
        Cell::Num(n)
    }
}

/// A CSV document being written.
pub struct Csv {
    w: csv::Writer<Vec<u8>>,
}

impl Csv {
    pub fn new(header: &[&str]) -> Csv {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        // Writing to memory cannot fail.
        let _ = w.write_record(header);
        Csv { w }
    }

    pub fn row(&mut self, cells: &[Cell<'_>]) {
        let fields: Vec<std::borrow::Cow<'_, str>> = cells
            .iter()
            .map(|c| match c {
                Cell::Num(n) => n.to_string().into(),
                Cell::Text(s) => guard(s),
            })
            .collect();
        let _ = self.w.write_record(fields.iter().map(|f| f.as_ref()));
    }

    pub fn finish(self) -> String {
        let bytes = self.w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// A text cell a spreadsheet would take for a formula, neutralised with a leading quote.
fn guard(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}").into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_numbers_and_only_formula_like_text_is_guarded() {
        let mut c = Csv::new(&["qty", "reason"]);
        c.row(&[Cell::Num(-3), Cell::Text("=HYPERLINK(\"x\")")]);
        c.row(&[Cell::Num(7), Cell::Text("-5 broken, \"wet\"")]);
        c.row(&[Cell::Num(0), Cell::Text("plain")]);
        assert_eq!(
            c.finish(),
            "qty,reason\n-3,\"'=HYPERLINK(\"\"x\"\")\"\n7,\"'-5 broken, \"\"wet\"\"\"\n0,plain\n"
        );
    }
}
