//! The remotes of one `watch`: a [`Link`] and a session model ([`Live`]) per host, so a remote
//! session's state has the same one owner as a local one's, and its events say their host.

use std::time::Duration;

use crossbeam_channel::Receiver;
use familiar_model::WindowFeed;
use familiar_model::text::printable_line;
use familiar_session::{ModelConfig, SessionSnapshot};

use super::link::{Link, News};
use super::spec::RemoteSpec;
use crate::source::live::{CliStates, Live, Took};
use crate::stage::Stage;

/// One remote host as the pipeline sees it.
struct Host {
    name: String,
    live: Live,
    cli_states: CliStates,
    caught_up: bool,
    /// Downs said since the link was last up (the first is a warning, the rest `-v`).
    downs: u32,
    failed: bool,
}

/// Every remote of a run, with the links that feed them. Dropping it ends the links (and so
/// the remote feeds: their ssh sessions end).
pub struct Hosts {
    hosts: Vec<Host>,
    news: Receiver<(usize, News)>,
    // Dropped after `news`' users: kills each `ssh`.
    _links: Vec<Link>,
}

impl Hosts {
    /// Start a link to each of `remotes`.
    pub fn start(remotes: Vec<RemoteSpec>, model: &ModelConfig) -> Hosts {
        let (sender, news) = crossbeam_channel::bounded(256);
        let mut hosts = Vec::new();
        let mut links = Vec::new();
        for (index, spec) in remotes.into_iter().enumerate() {
            let name = spec.name();
            hosts.push(Host {
                live: Live::remote(model.clone(), &name),
                name,
                cli_states: CliStates::follow(None),
                caught_up: false,
                downs: 0,
                failed: false,
            });
            links.push(Link::spawn(index, spec, sender.clone()));
        }
        if hosts.is_empty() {
            return Hosts {
                hosts,
                news: crossbeam_channel::never(),
                _links: links,
            };
        }
        Hosts {
            hosts,
            news,
            _links: links,
        }
    }

    /// What the links say, to select on.
    pub fn news(&self) -> Receiver<(usize, News)> {
        self.news.clone()
    }

    /// Keep each event's record for the scripts (`ev.raw`) or not.
    pub fn set_keep_raw(&mut self, keep: bool) {
        for host in &mut self.hosts {
            host.live.set_keep_raw(keep);
        }
    }

    /// The wall clock's time into every host's model (its timers).
    pub fn tick(&mut self) {
        for host in &mut self.hosts {
            host.live.tick();
        }
    }

    /// The session models, to drain.
    pub fn lives(&mut self) -> impl Iterator<Item = &mut Live> {
        self.hosts.iter_mut().map(|host| &mut host.live)
    }

    /// One piece of news from link `index`.
    pub fn take(&mut self, index: usize, news: News, stage: &mut Stage) {
        let Some(host) = self.hosts.get_mut(index) else {
            return;
        };
        match news {
            News::Up { version } => {
                if host.downs > 0 {
                    eprintln!("familiar: {}: connected again", host.name);
                } else {
                    tracing::info!(
                        "{}: connected (Familiar {})",
                        host.name,
                        printable_line(&version)
                    );
                }
                host.downs = 0;
                stage.tell_window(WindowFeed::Remote {
                    host: host.name.clone(),
                    connected: true,
                });
            }
            News::Tail(message) => {
                if host.live.take(message) == Took::CaughtUp && !host.caught_up {
                    host.caught_up = true;
                    host.live.caught_up(&mut host.cli_states);
                    tracing::info!("{}: caught up", host.name);
                }
            }
            News::Hook(input) => {
                if let Some(signal) = familiar_hook::hook_event(&input) {
                    host.live.hook(&signal);
                }
            }
            News::CliState(change) => host.live.cli_state(&mut host.cli_states, change),
            News::Down { reason, retry_in } => {
                let line = format!(
                    "familiar: {}: {}; trying again in {}",
                    host.name,
                    printable_line(&reason),
                    seconds(retry_in)
                );
                if host.downs == 0 {
                    eprintln!("{line}");
                } else {
                    tracing::info!("{line}");
                }
                host.downs += 1;
                stage.tell_window(WindowFeed::Remote {
                    host: host.name.clone(),
                    connected: false,
                });
            }
            News::Failed { reason } => {
                host.failed = true;
                eprintln!("familiar: {}", printable_line(&reason));
                stage.tell_window(WindowFeed::Remote {
                    host: host.name.clone(),
                    connected: false,
                });
            }
        }
    }

    /// Are there remote hosts at all?
    pub fn any(&self) -> bool {
        !self.hosts.is_empty()
    }

    /// Is every host's link given up (nothing more will come from any)?
    pub fn all_failed(&self) -> bool {
        !self.hosts.is_empty() && self.hosts.iter().all(|host| host.failed)
    }

    /// Have all the hosts caught up (or failed)?
    pub fn caught_up(&self) -> bool {
        self.hosts.iter().all(|host| host.caught_up || host.failed)
    }
}

/// The sessions on `spec`'s host as `watch --remote` would see them when caught up, read
/// once (`familiar sessions --remote`), and how many transcripts there were left unread as
/// dormant: a link that drops or cannot be made is an error, not tried again.
pub fn sessions_once(
    spec: RemoteSpec,
    model: ModelConfig,
    limit: Duration,
) -> Result<(Vec<SessionSnapshot>, u64), String> {
    let name = spec.name();
    let (sender, news) = crossbeam_channel::bounded(256);
    let link = Link::spawn(0, spec, sender);
    let mut live = Live::remote(model, &name);
    let mut cli_states = CliStates::follow(None);
    let deadline = std::time::Instant::now() + limit;
    let mut dormant = 0;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let (_, item) = news
            .recv_timeout(left)
            .map_err(|_| format!("{name}: the sessions were not read within {limit:?}"))?;
        match item {
            News::Tail(message) => {
                dormant += u64::from(matches!(
                    message,
                    familiar_tail::TailMessage::Dormant { selected: true, .. }
                ));
                if live.take(message) == Took::CaughtUp {
                    break;
                }
            }
            News::Hook(_) | News::Up { .. } => {}
            News::CliState(change) => live.cli_state(&mut cli_states, change),
            News::Down { reason, .. } => return Err(format!("{name}: {reason}")),
            News::Failed { reason } => return Err(reason),
        }
        live.drain().for_each(drop);
    }
    live.caught_up(&mut cli_states);
    live.drain().for_each(drop);
    drop(link);
    let mut snapshots = live.model.snapshot();
    for snapshot in &mut snapshots {
        snapshot.host = Some(name.clone());
    }
    Ok((snapshots, dormant))
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}
