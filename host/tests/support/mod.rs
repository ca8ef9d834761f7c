//! What the host's tests share: a real Redis server on a free loopback port, and plain HTTP/1.1
//! exchanges.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of this test's own (Debian's package; `.ci/run` installs it), its data
/// in a folder of its own with an append-only file, so a restart keeps every write.
pub struct Redis {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
    tls: bool,
}

impl Redis {
    pub fn start() -> Self {
        Self::started(false)
    }

    /// A server that speaks only TLS, with a certificate for 127.0.0.1 signed by a CA of its own
    /// (made with `openssl`; [`Redis::ca_file`] is the CA to trust).
    pub fn start_tls() -> Self {
        Self::started(true)
    }

    fn started(tls: bool) -> Self {
        let mut redis = Self {
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            child: None,
            tls,
        };
        if tls {
            redis.make_certificates();
        }
        redis.restart();
        redis
    }

    /// `redis://127.0.0.1:<port>/0` (`rediss://` for a TLS server).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}/0", self.port)
    }

    /// The CA that signed a TLS server's certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn make_certificates(&self) {
        let openssl = |args: &[&str]| {
            let status = Command::new("openssl")
                .current_dir(self.dir.path())
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("openssl runs (apt-get install openssl)");
            assert!(status.success(), "openssl {args:?}");
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=structure test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        std::fs::write(
            self.dir.path().join("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ]);
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Stops the server (SIGTERM: it writes its data out first) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        let port = self.port.to_string();
        let mut command = Command::new("redis-server");
        command.args(["--bind", "127.0.0.1"]);
        if self.tls {
            command
                .args([
                    "--port",
                    "0",
                    "--tls-port",
                    &port,
                    "--tls-auth-clients",
                    "no",
                ])
                .arg("--tls-cert-file")
                .arg(self.dir.path().join("server.pem"))
                .arg("--tls-key-file")
                .arg(self.dir.path().join("server.key"));
        } else {
            command.args(["--port", &port]);
        }
        let child = command
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (apt-get install redis-server)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.listens() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server is up: it answers PING (a TLS server: it accepts a connection).
    fn listens(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        if self.tls {
            return true;
        }
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The head of an HTTP/1.1 request that closes its connection after the answer.
pub fn request_head(method: &str, path: &str, headers: &[(&str, &str)], body_len: usize) -> String {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: structure\r\nconnection: close\r\ncontent-length: {body_len}\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// One HTTP/1.1 exchange over a fresh connection: the status and the body.
pub fn http(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("the server listens");
    let head = request_head(method, path, headers, body.len());
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A `structure serve` process, its address and the lines it writes to stderr.
pub struct Served {
    pub child: Child,
    pub address: String,
    pub log: std::sync::mpsc::Receiver<String>,
    /// What it said on stderr before it said where it listens.
    pub early: Vec<String>,
}

impl Served {
    /// `structure serve` with `args` and `env`, once it says where it listens.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
        for (name, _) in std::env::vars() {
            if name.starts_with("STRUCTURE_")
                || name.starts_with("OPENAI_")
                || name.starts_with("OTEL_")
            {
                command.env_remove(name);
            }
        }
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the structure binary runs");
        let stderr = child.stderr.take().unwrap();
        let (sender, log) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut early = Vec::new();
        let address = loop {
            let line = log
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("structure serve starts");
            if let Some(rest) = line.split("serving http://").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
            early.push(line);
        };
        Self {
            early,
            child,
            address,
            log,
        }
    }

    /// The JSON lines of the access log written so far.
    pub fn access_log(&self) -> Vec<serde_json::Value> {
        let mut lines = Vec::new();
        while let Ok(line) = self.log.recv_timeout(Duration::from_millis(200)) {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) {
                lines.push(value);
            }
        }
        lines
    }

    /// Every line on stderr so far (the access log's and the others), waiting up to `wait` for
    /// the first.
    pub fn stderr_lines(&self, wait: Duration) -> Vec<String> {
        let mut lines = self.early.clone();
        lines.extend(self.log.recv_timeout(wait));
        while let Ok(line) = self.log.recv_timeout(Duration::from_millis(200)) {
            lines.push(line);
        }
        lines
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one HTTP/1.1 request (with a content-length body) from `stream`: its head (request line
/// and headers) and body.
pub fn read_http_request(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 8192];
    let (head_end, length) = loop {
        let read = stream.read(&mut buffer).unwrap();
        assert!(read > 0, "the request ended early");
        raw.extend_from_slice(&buffer[..read]);
        if let Some(end) = raw.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while raw.len() < head_end + length {
        let read = stream.read(&mut buffer).unwrap();
        assert!(read > 0, "the body ended early");
        raw.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    (head, raw[head_end..head_end + length].to_vec())
}

/// A command's stdout as JSON, or a panic showing both its streams.
pub fn stdout_json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
