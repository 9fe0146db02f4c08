//! Click-to-focus and hover, driven through Bevy's own input resources (`ButtonInput`) and the
//! pointer's place in layout coordinates ([`PointerAt`]), with no window (the layout is the
//! default 480×320 one). Also what the panel's state takes from the events.

use familiar_game::logic::{Bar, Doings, Hovered, Selected, mana_figures};
use familiar_game::{FocusPlugin, PointerAt, layout};
use familiar_model::{PlanItem, PlanStatus};

use super::*;

fn party(sessions: &[&str]) -> (App, Vec<Entity>) {
    let mut app = app();
    app.add_plugins(FocusPlugin);
    for s in sessions {
        let mut ev = event(EventKind::Reading, Some(148_213));
        ev.session = Some(s.to_string());
        ev.target = Some(format!("/repo/{s}.rs"));
        send(&mut app, GameFeed::Event(ev));
        app.update();
    }
    let mut q = app.world_mut().query::<(Entity, &Familiar)>();
    let mut all: Vec<(usize, Entity)> = q.iter(app.world()).map(|(e, f)| (f.slot, e)).collect();
    all.sort();
    (app, all.into_iter().map(|(_, e)| e).collect())
}

fn point_at(app: &mut App, p: Vec2) {
    app.world_mut().resource_mut::<PointerAt>().0 = Some(p);
    app.update();
}

fn click(app: &mut App, p: Vec2) {
    app.world_mut().resource_mut::<PointerAt>().0 = Some(p);
    app.world_mut()
        .resource_mut::<ButtonInput<MouseButton>>()
        .press(MouseButton::Left);
    app.update();
    let mut buttons = app.world_mut().resource_mut::<ButtonInput<MouseButton>>();
    buttons.release(MouseButton::Left);
    buttons.clear();
}

fn selected(app: &App) -> Option<Entity> {
    app.world().resource::<Selected>().0
}

#[test]
fn clicking_a_familiar_focuses_it_and_empty_space_or_esc_returns() {
    let (mut app, order) = party(&["s1", "s2", "s3"]);
    let l = layout(Vec2::new(480.0, 320.0), 3);
    click(&mut app, l.sprite_rect(1).center());
    assert_eq!(selected(&app), Some(order[1]));
    // Another familiar takes the focus; a click on the card keeps it.
    click(&mut app, l.sprite_rect(2).center());
    assert_eq!(selected(&app), Some(order[2]));
    let card = l.card_rect().expect("room for the card");
    click(&mut app, card.center());
    assert_eq!(selected(&app), Some(order[2]));
    // Empty space (the floor left of the first familiar) returns.
    click(&mut app, Vec2::new(1.0, 318.0));
    assert_eq!(selected(&app), None);
    // A plate focuses its familiar too; Esc returns.
    click(&mut app, l.plate_rect(0).min + Vec2::splat(3.0));
    assert_eq!(selected(&app), Some(order[0]));
    app.world_mut()
        .resource_mut::<ButtonInput<KeyCode>>()
        .press(KeyCode::Escape);
    app.update();
    assert_eq!(selected(&app), None);
}

#[test]
fn hovering_a_bar_names_it_and_its_figures_are_exact() {
    let (mut app, order) = party(&["s1", "s2"]);
    let l = layout(Vec2::new(480.0, 320.0), 2);
    point_at(&mut app, l.mana_bar_rect(1).center());
    assert_eq!(
        app.world().resource::<Hovered>().0,
        Some((order[1], Bar::Mana))
    );
    let mana = app.world().get::<Mana>(order[1]).expect("mana").clone();
    assert_eq!(mana_figures(&mana), "51,787 of 200,000 tokens left (26 %)");
    point_at(&mut app, l.xp_bar_rect(0).expect("full plates").center());
    assert_eq!(
        app.world().resource::<Hovered>().0,
        Some((order[0], Bar::Xp))
    );
    // The plate's first line, cut to fit, says itself whole on hover.
    point_at(&mut app, l.name_rect(1).center());
    assert_eq!(
        app.world().resource::<Hovered>().0,
        Some((order[1], Bar::Name))
    );
    point_at(&mut app, Vec2::new(1.0, 318.0));
    assert_eq!(app.world().resource::<Hovered>().0, None);
    // Focused, the card covers the plates: no bar under the pointer.
    click(&mut app, l.sprite_rect(0).center());
    point_at(&mut app, l.mana_bar_rect(1).center());
    assert_eq!(app.world().resource::<Hovered>().0, None);
}

#[test]
fn a_focused_familiar_that_leaves_is_no_longer_focused() {
    let (mut app, order) = party(&["s1", "s2"]);
    let l = layout(Vec2::new(480.0, 320.0), 2);
    click(&mut app, l.sprite_rect(1).center());
    assert_eq!(selected(&app), Some(order[1]));
    app.world_mut().despawn(order[1]);
    app.update();
    assert_eq!(selected(&app), None);
}

#[test]
fn the_panel_keeps_the_plan_the_quest_and_the_last_actions_of_the_main_agent() {
    let mut app = app();
    let mut prompt = event(EventKind::Prompt, None);
    prompt.text = Some("Fix   the\nparser".into());
    send(&mut app, GameFeed::Event(prompt));
    let mut plan = event(EventKind::Thinking, None);
    plan.tool = Some("TodoWrite".into());
    plan.plan = Some(vec![PlanItem {
        text: "Fix it".into(),
        status: PlanStatus::InProgress,
        active_form: None,
    }]);
    send(&mut app, GameFeed::Event(plan));
    let mut bash = event(EventKind::Bash, None);
    bash.target = Some("cargo test".into());
    send(&mut app, GameFeed::Event(bash));
    // A subagent's actions are its companion's, not the familiar's.
    let mut sub = event(EventKind::Bash, None);
    sub.agent = Some("a1".into());
    sub.target = Some("rm -rf target".into());
    send(&mut app, GameFeed::Event(sub));
    app.update();
    let mut q = app.world_mut().query::<&Doings>();
    let doings = q.single(app.world()).expect("one familiar");
    assert_eq!(doings.prompt.as_deref(), Some("Fix the parser"));
    assert_eq!(doings.plan.len(), 1);
    let deeds: Vec<String> = doings.deeds.iter().map(|d| d.line(40)).collect();
    assert_eq!(deeds, ["$ cargo test"]);
}
