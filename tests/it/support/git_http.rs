//! A git smart-HTTP server for tests: `git http-backend` (CGI, git's own server side) over the
//! repositories under one directory, on 127.0.0.1, answering as GitHub answers for a private
//! repository: 401 with `WWW-Authenticate: Basic` unless the request carries the job's token as
//! actions/checkout sends it (`Authorization: basic base64(x-access-token:<token>)`), and 400 when
//! `Authorization` comes twice (a persisted header and another one). Every request's
//! `Authorization` values are recorded, so a test can see what git sent.
#![allow(dead_code)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// The running server.
#[derive(Clone)]
pub struct GitHttp {
    /// `http://127.0.0.1:PORT` (the "server URL"; a repository is `<url>/<owner>/<name>`).
    pub url: String,
    seen: Arc<Mutex<Vec<Vec<String>>>>,
}

impl GitHttp {
    /// Serve the repositories under `root` (`<root>/<owner>/<name>` is a git directory), accepting
    /// only `token`.
    pub fn start(root: &Path, token: &str) -> GitHttp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let expected = format!("basic {}", base64_of(&format!("x-access-token:{token}")));
        let (root, log) = (root.to_path_buf(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, log, expected) = (root.clone(), log.clone(), expected.clone());
                std::thread::spawn(move || serve(&root, &log, &expected, stream));
            }
        });
        GitHttp { url, seen }
    }

    /// The `Authorization` values of every request so far (one list per request).
    pub fn authorizations(&self) -> Vec<Vec<String>> {
        self.seen.lock().expect("lock").clone()
    }
}

/// Standard base64 of `s` (what `Buffer.from(s).toString('base64')` gives).
pub fn base64_of(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in s.as_bytes().chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn respond(mut stream: TcpStream, status: &str, headers: &[(String, String)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

fn serve(root: &Path, log: &Mutex<Vec<Vec<String>>>, expected: &str, stream: TcpStream) {
    let Some(Ok(req)) = crate::support::http_wire::read_request(&stream) else {
        return;
    };
    let headers = &req.headers;
    let get = |n: &str| req.header(n).map(str::to_string);
    let (method, target, body) = (&req.method, &req.target, &req.body);
    let auth: Vec<String> = headers
        .iter()
        .filter(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone())
        .collect();
    log.lock().expect("lock").push(auth.clone());
    if auth.len() > 1 {
        return respond(
            stream,
            "400 Bad Request",
            &[],
            b"Duplicate header: \"Authorization\"",
        );
    }
    if !auth
        .first()
        .is_some_and(|a| a.eq_ignore_ascii_case(expected) || a == expected)
    {
        return respond(
            stream,
            "401 Unauthorized",
            &[("www-authenticate".into(), "Basic realm=\"GitHub\"".into())],
            b"",
        );
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "x-access-token")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (header, var) in [
        ("content-type", "CONTENT_TYPE"),
        ("git-protocol", "GIT_PROTOCOL"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
    ] {
        if let Some(v) = get(header) {
            cgi.env(var, v);
        }
    }
    let Ok(mut child) = cgi.spawn() else {
        return respond(stream, "500 Internal Server Error", &[], b"no git");
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(body);
    }
    let out = child.wait_with_output().expect("http-backend");
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        });
    let Some((at, gap)) = split else {
        return respond(stream, "500 Internal Server Error", &[], &out.stdout);
    };
    let head = String::from_utf8_lossy(&out.stdout[..at]).into_owned();
    let mut status = "200 OK".to_string();
    let mut response_headers = Vec::new();
    for l in head.lines() {
        if let Some((n, v)) = l.split_once(':') {
            if n.eq_ignore_ascii_case("status") {
                status = v.trim().to_string();
            } else {
                response_headers.push((n.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    respond(stream, &status, &response_headers, &out.stdout[at + gap..]);
}
