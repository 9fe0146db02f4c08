//! Notification bodies are untrusted text: a server that advertises `body-markup` (and so
//! renders links and images) gets them escaped, shown as the text they are. Against a real
//! `dbus-daemon --session`; one test per file (it sets `DBUS_SESSION_BUS_ADDRESS`).

mod support;

use familiar_model::Urgency;
use familiar_sink::{NotifyOptions, NotifySink, Sink};
use familiar_testkit::dbus::{DbusDaemon, start_notification_server_with};
use support::notify;

#[test]
fn notification_markup_is_escaped_for_a_server_that_renders_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let daemon = DbusDaemon::start(dir.path());
    // SAFETY: the only test in this process, and no other thread exists yet.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &daemon.address) };
    let calls = start_notification_server_with(
        &daemon.address,
        &["body", "body-markup", "body-hyperlinks", "body-images"],
    );
    let mut sink = NotifySink::new(NotifyOptions::default());
    let body = r#"<a href="https://evil.example/">click</a> <img src="file:///etc/passwd"> <b>x</b> & 'q'"#;
    sink.handle(&notify("Tool <error>", body, Urgency::Normal, "s1"));
    sink.flush();
    let received: Vec<_> = calls.try_iter().collect();
    assert_eq!(received.len(), 1, "{received:#?}");
    assert_eq!(
        received[0].body,
        "&lt;a href=&quot;https://evil.example/&quot;&gt;click&lt;/a&gt; &lt;img \
         src=&quot;file:///etc/passwd&quot;&gt; &lt;b&gt;x&lt;/b&gt; &amp; &apos;q&apos;"
    );
    // The summary is plain text by the spec: sent as it is.
    assert_eq!(received[0].summary, "Tool <error>");
}
