//! HTTP/1.1 on the wire for the test servers (the fake GitHub, the git server): one request read
//! from a connection — the request line, the headers (names in lower case, every value kept), and
//! the body by `content-length` or `transfer-encoding: chunked` (what git sends for a large one).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, `PUT`.
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lower-case header names with values, in order (a header may come twice).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Read one request from `stream`: None when the connection closed before a request line; the
/// request with `Err` when its body is shorter than announced.
pub fn read_request(stream: &TcpStream) -> Option<Result<Request, Request>> {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let mut req = Request {
        method: parts.next().unwrap_or_default().to_string(),
        target: parts.next().unwrap_or_default().to_string(),
        headers: Vec::new(),
        body: Vec::new(),
    };
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            req.headers
                .push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    if chunked {
        loop {
            let mut size = String::new();
            if reader.read_line(&mut size).unwrap_or(0) == 0 {
                return Some(Err(req));
            }
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0u8; n + 2];
            if reader.read_exact(&mut chunk).is_err() {
                return Some(Err(req));
            }
            if n == 0 {
                break;
            }
            req.body.extend_from_slice(&chunk[..n]);
        }
        return Some(Ok(req));
    }
    let n: usize = req
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; n];
    if reader.read_exact(&mut body).is_err() {
        return Some(Err(req));
    }
    req.body = body;
    Some(Ok(req))
}
