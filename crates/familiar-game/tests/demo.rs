//! `familiar demo` earns a level-up on screen: the bundled transcript (`fixtures/demo.jsonl`)
//! through the shipped scripts (as the demo runs them: no saved store, the events' own
//! clock) and the progression as the pipeline's Stage keeps it (`earn`: the level-up said, the
//! profile sent) into the game logic, headless, from a fresh profile. The familiar's level
//! rises, its level-up effect plays, it says so, and the first unlock shows in the log strip.

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use familiar_game::GameFeed;
use familiar_game::logic::{FeedMessage, GameLogicPlugin, LogStrip, Progress, Speech};
use familiar_game::progression::{Profile, earn};
use familiar_script::{EventClock, HostConfig, SHIPPED, ScriptHost};
use familiar_transcript::{NormalizerConfig, normalize_bytes};

const DEMO: &[u8] = include_bytes!("../../../fixtures/demo.jsonl");

#[test]
fn the_demo_through_the_shipped_scripts_crosses_a_level_on_screen() {
    let config = NormalizerConfig {
        keep_raw: true,
        ..NormalizerConfig::default()
    };
    let (events, diagnostics) = normalize_bytes(DEMO, &config);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let mut host = ScriptHost::new(HostConfig {
        clock: Arc::new(EventClock::new()),
        ..HostConfig::default()
    });
    for (name, source) in SHIPPED {
        if let Err(err) = host.load_source(name, source, None) {
            panic!("{name}: {err}");
        }
    }

    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(GameLogicPlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            100,
        )));
    app.update();
    let mut level_up_shown = false;
    let mut said = Vec::new();
    let mut level = 1;
    let mut profile = Profile::default();
    for event in &events {
        let (mut actions, diagnostics) = host.handle_event(event);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let (update, level_ups) = earn(&mut profile, &actions);
        actions.extend(level_ups);
        app.world_mut()
            .write_message(FeedMessage(GameFeed::Event(event.clone())));
        for action in actions {
            app.world_mut()
                .write_message(FeedMessage(GameFeed::Action(action)));
        }
        if let Some(update) = update {
            app.world_mut()
                .write_message(FeedMessage(GameFeed::Progress(update)));
        }
        app.update();
        let mut q = app.world_mut().query::<(&Progress, &Speech)>();
        for (progress, speech) in q.iter(app.world()) {
            level = level.max(progress.level);
            level_up_shown |= progress.level_up_age.is_some();
            if let Some((text, _)) = &speech.0
                && !said.contains(text)
            {
                said.push(text.clone());
            }
        }
    }
    assert!(level >= 2, "the demo ends at level {level}");
    assert!(level_up_shown, "the level-up effect plays");
    assert!(said.iter().any(|s| s == "Level 2!"), "said: {said:?}");
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert!(
        log.iter().any(|line| line.starts_with("Unlocked: ")),
        "{log:?}"
    );
}
