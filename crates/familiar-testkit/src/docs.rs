//! Reading the reference docs that tests keep true (`docs/events.md`, `docs/scripting.md`):
//! a section by its heading, the names of a table's first column, and the keys a JSON object
//! prints in their order. Shared by the crates whose contracts those docs state.

/// A document under `docs/` of the workspace.
pub fn read(name: &str) -> String {
    let path = super::workspace_root().join("docs").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of the section with this heading, up to the next heading of its level or above.
pub fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading}"));
    let rest = &doc[start + heading.len() + 2..];
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut end = 0;
    for line in rest.split_inclusive('\n') {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=level).contains(&hashes) && line[hashes..].starts_with(' ') {
            break;
        }
        end += line.len();
    }
    &rest[..end]
}

/// The names in back quotes of the first cell of each row of the section's first table
/// (header and separator left out); a cell naming several (`` `a`, `b` ``) gives each.
pub fn first_column(section: &str) -> Vec<String> {
    section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .flat_map(|line| {
            let cell = line.split('|').nth(1).unwrap_or("").trim();
            cell.split(", ")
                .map(|name| name.trim().trim_matches('`').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The top-level keys of a JSON object in the order they are printed (a parsed map sorts
/// them): a key's first `"key":` in the text.
pub fn keys_in_order(json: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let mut keys: Vec<(usize, String)> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(|key| {
            (
                json.find(&format!("\"{key}\":")).unwrap_or(usize::MAX),
                key.clone(),
            )
        })
        .collect();
    keys.sort();
    keys.into_iter().map(|(_, key)| key).collect()
}
