//! The rasterizer and its metrics, without a GPU.

use super::*;

/// The bitmap as text, `#` for ink, for readable assertions.
fn art(b: &TextBitmap) -> Vec<String> {
    (0..b.height)
        .map(|y| {
            (0..b.width)
                .map(|x| match b.get(x, y) {
                    Pixel::Ink => '#',
                    Pixel::Shadow => 's',
                    Pixel::Clear => '.',
                })
                .collect()
        })
        .collect()
}

fn ink_columns(b: &TextBitmap) -> Vec<u32> {
    (0..b.width)
        .filter(|x| (0..b.height).any(|y| b.get(*x, y) == Pixel::Ink))
        .collect()
}

#[test]
fn every_printable_ascii_latin1_and_extended_a_character_is_drawn_by_the_pixel_font() {
    let ranges = [0x21..=0x7e, 0xa1..=0xff, 0x100..=0x17f];
    for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
        assert!(
            covers(c),
            "{c:?} U+{:04X} is not in the pixel font",
            c as u32
        );
        let b = render(&[&c.to_string()], false);
        // The soft hyphen is drawn as a hyphen: everything has ink.
        assert!(b.has_ink(), "{c:?} draws nothing");
        assert_eq!(b.width, width(&c.to_string()));
    }
}

#[test]
fn ascii_is_measured_exactly_as_drawn() {
    // A (5) + blank, b (4) + blank, 1 (4) + blank.
    assert_eq!(width("Ab1"), 16);
    assert_eq!(width(""), 0);
    let b = render(&["Ab1"], false);
    assert_eq!((b.width, b.height), (16, LINE_HEIGHT));
    // Capitals stand from CAP_TOP to the baseline.
    let a = art(&render(&["A"], false));
    assert_eq!(a[CAP_TOP as usize], ".###..");
    assert_eq!(a[BASELINE as usize - 1], "#...#.");
    assert!(a[..CAP_TOP as usize].iter().all(|r| !r.contains('#')));
    // A descender goes under the baseline.
    let g = art(&render(&["g"], false));
    assert!(g[BASELINE as usize + 1].contains('#'));
}

#[test]
fn accents_are_composed_above_the_letter() {
    let plain = art(&render(&["e"], false));
    let acute = art(&render(&["é"], false));
    // Same letter, plus ink above the x-height.
    for row in 9..16 {
        assert_eq!(plain[row], acute[row], "row {row}");
    }
    assert!(acute[6..8].iter().any(|r| r.contains('#')), "{acute:#?}");
    // The capital's accent sits higher than the small letter's, inside the line.
    let cap = art(&render(&["É"], false));
    assert!(cap[4..6].iter().any(|r| r.contains('#')), "{cap:#?}");
    assert!(
        cap[6].chars().all(|c| c == '.'),
        "a blank row under the accent"
    );
    // A decomposed sequence draws the same as the precomposed letter.
    assert_eq!(render(&["e\u{301}"], false), render(&["é"], false));
    assert_eq!(width("café"), width("cafe"));
    // i loses its dot under an accent, which sits where the dot was, not above it.
    let i = art(&render(&["í"], false));
    assert!(i[6].contains('#') && !i[8].contains('#'), "{i:#?}");
    assert!(i[..6].iter().all(|r| !r.contains('#')), "{i:#?}");
    // A cedilla hangs under the letter.
    let c = art(&render(&["ç"], false));
    assert!(c[14].contains('#'));
}

#[test]
fn cjk_is_double_width_from_the_fallback() {
    assert!(!covers('修'));
    assert_eq!(width("修"), 16);
    assert_eq!(width("修正テスト"), 5 * 16);
    assert_eq!(width("한"), 16);
    let b = render(&["修"], false);
    assert!(b.has_ink());
    // Unifont's ideographs use the whole line height.
    assert!((0..16).any(|x| b.get(x, 0) == Pixel::Ink || b.get(x, 1) == Pixel::Ink));
    // Other scripts fall back too, narrow: Greek, Cyrillic.
    assert_eq!(width("λ"), 8);
    assert_eq!(width("ж"), 8);
}

#[test]
fn emoji_render_from_the_fallback_and_joiners_vanish() {
    let rocket = render(&["🚀"], false);
    assert_eq!(rocket.width, 16);
    assert!(rocket.has_ink());
    // The variation selector draws nothing and takes no room.
    assert_eq!(width("🚀\u{fe0f}"), 16);
    assert_eq!(render(&["🚀\u{fe0f}"], false), rocket);
}

#[test]
fn a_character_nobody_covers_is_a_visible_box() {
    // A private-use character: neither font has it.
    let b = render(&["\u{e000}"], false);
    assert_eq!(b.width, 8);
    let a = art(&b);
    assert_eq!(a[3], ".######.");
    assert_eq!(a[8], ".#....#.");
    // A control character, too, rather than nothing.
    assert!(render(&["\u{7}"], false).has_ink());
    // An unassigned wide character takes two cells.
    assert_eq!(width("\u{2fffd}"), 16);
}

#[test]
fn fit_cuts_between_clusters_with_an_ellipsis_and_never_overflows() {
    assert_eq!(fit("familiar", 100), "familiar");
    let long = "slopometry 0f112e on a-very-long-branch-name";
    for max in [0, 3, 6, 10, 40, 80, 120] {
        let cut = fit(long, max);
        assert!(width(&cut) <= max, "{max}: {cut:?} is {} wide", width(&cut));
        if max >= 6 {
            assert!(cut.ends_with('…'), "{max}: {cut:?}");
        }
        assert!(long.starts_with(cut.trim_end_matches('…')));
    }
    // Never inside a cluster: the accent stays with its letter, the ideograph whole.
    let text = "cafe\u{301}s 修正テスト";
    for max in 0..width(text) {
        let cut = fit(text, max);
        let kept = cut.trim_end_matches('…');
        assert!(text.starts_with(kept));
        assert!(!kept.ends_with('e') || !text[kept.len()..].starts_with('\u{301}'));
        assert!(width(&cut) <= max);
    }
    assert_eq!(fit("修正テスト", 40), "修正…");
}

#[test]
fn wrap_breaks_between_words_and_cuts_the_last_line() {
    let lines = wrap("Corrige le test café maintenant", 60, 3);
    assert!(lines.len() > 1, "{lines:?}");
    assert!(lines.iter().all(|l| width(l) <= 60), "{lines:?}");
    assert_eq!(lines.join(" "), "Corrige le test café maintenant");
    let cut = wrap("one two three four five six seven eight", 40, 2);
    assert_eq!(cut.len(), 2);
    assert!(cut[1].ends_with('…'), "{cut:?}");
    // A word longer than the line is broken between clusters.
    let long = wrap("修正テスト修正テスト", 40, 5);
    assert!(long.iter().all(|l| width(l) <= 40), "{long:?}");
    assert_eq!(long.concat(), "修正テスト修正テスト");
    assert_eq!(wrap("a\nb", 100, 3), vec!["a", "b"]);
    assert_eq!(wrap("a\nb", 100, 1), vec!["a b…"]);
}

#[test]
fn the_shadow_falls_right_and_down_and_lines_stack() {
    let b = render(&["l"], true);
    assert_eq!((b.width, b.height), (width("l") + 1, LINE_HEIGHT + 1));
    assert_eq!(b.get(1, CAP_TOP + 1), Pixel::Shadow);
    let two = render(&["a", "bb"], false);
    assert_eq!((two.width, two.height), (width("bb"), 2 * LINE_HEIGHT));
    assert_eq!(ink_columns(&render(&["i"], false)), vec![0]);
    let rgba = two.to_rgba();
    assert_eq!(rgba.len(), (two.width * two.height * 4) as usize);
}

/// Seen on a glyph sheet: the circumflexes of "ìíîï" ran into each other, wider than their
/// one-pixel letters.
#[test]
fn a_mark_wider_than_its_letter_widens_it_so_neighbours_never_touch() {
    assert_eq!(width("î"), 4);
    let b = render(&["îî"], false);
    assert_eq!(b.width, 8);
    for x in [3, 7] {
        assert!(
            (0..b.height).all(|y| b.get(x, y) == Pixel::Clear),
            "column {x}"
        );
    }
    // The stem stands under the middle of the mark.
    assert_eq!(b.get(1, 10), Pixel::Ink);
}
