//! A real headless Chromium driven over WebDriver (Debian's chromium and
//! chromium-driver; `.ci/run` installs them). Missing, the test fails and
//! says so.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

pub struct Browser {
    driver: Child,
    pub client: Client,
    _profile: tempfile::TempDir,
}

fn program(env: &str, default: &str) -> PathBuf {
    let p = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    let found = Command::new(&p)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{} not found: install Debian's chromium and chromium-driver (`.ci/run` does), or set {env}",
        p.display()
    );
    p
}

impl Browser {
    /// Chromium, headless, at `width`×`height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        let chromium = program("KEN_TEST_CHROMIUM", "/usr/bin/chromium");
        let chromedriver = program("KEN_TEST_CHROMEDRIVER", "chromedriver");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--disable-quic",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        });
        let caps: fantoccini::wd::Capabilities =
            caps.as_object().unwrap().clone().into_iter().collect();
        let url = format!("http://127.0.0.1:{port}");
        let t0 = Instant::now();
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(c) => break c,
                Err(e) => {
                    assert!(t0.elapsed() < Duration::from_secs(30), "chromedriver: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        };
        Browser {
            driver,
            client,
            _profile: profile,
        }
    }

    /// Wait for an element (CSS) to appear.
    pub async fn find(&self, css: &str) -> fantoccini::elements::Element {
        match self
            .client
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css(css))
            .await
        {
            Ok(e) => e,
            Err(e) => panic!("no `{css}` on {:?}: {e}", self.client.current_url().await),
        }
    }

    /// Wait until a JavaScript expression is true.
    pub async fn until(&self, what: &str, js: &str) {
        let t0 = Instant::now();
        loop {
            let v = self
                .client
                .execute(&format!("return !!({js});"), vec![])
                .await
                .unwrap();
            if v.as_bool() == Some(true) {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    pub async fn path(&self) -> String {
        let u = self.client.current_url().await.unwrap();
        match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        }
    }

    /// Save a screenshot under the tests' target directory; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.unwrap();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
    }
}
