//! Resource URI templates: matching any URI against any template the server accepts takes
//! bounded time (no backtracking, issue #16 item 14), and a match is sound: the values put
//! back into the template give the URI, and a simple `{var}` never spans `/`, `?` or `#`.

#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;

/// Far above what a linear matcher needs for the inputs libFuzzer makes (4 KiB by default),
/// far below what a backtracking one takes on adjacent variables.
const BOUND: Duration = Duration::from_millis(250);

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (template, uri) = rest.split_at(rest.len().min(usize::from(split)));
    let (template, uri) = (
        String::from_utf8_lossy(template),
        String::from_utf8_lossy(uri),
    );
    // Repeat the URI so a crafted one is long, as an attacker's would be (up to the 64 KiB
    // the matcher takes at most).
    let times = (1 + usize::from(split % 16) * 8)
        .min(65_536 / uri.len().max(1))
        .max(1);
    let uri = uri.repeat(times);
    let start = Instant::now();
    let matched = smcp_server::fuzzing::match_uri_template(&template, &uri);
    let took = start.elapsed();
    assert!(took < BOUND, "matching took {took:?}");
    let Ok(Some(vars)) = matched else {
        return;
    };
    // Rebuild the URI from the template and the values.
    let mut rebuilt = String::new();
    let mut rest = &*template;
    while let Some(open) = rest.find('{') {
        rebuilt.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .unwrap_or_else(|| panic!("accepted {template:?}"))
            + open;
        let expr = &rest[open + 1..close];
        let (reserved, name) = match expr.strip_prefix('+') {
            Some(name) => (true, name),
            None => (false, expr),
        };
        let value = vars
            .get(name)
            .unwrap_or_else(|| panic!("no value for {name}"));
        assert!(!value.is_empty(), "{name} is empty");
        if !reserved {
            assert!(!value.contains(['/', '?', '#']), "{name} = {value:?}");
        }
        rebuilt.push_str(value);
        rest = &rest[close + 1..];
    }
    rebuilt.push_str(rest);
    assert_eq!(rebuilt, uri);
});
