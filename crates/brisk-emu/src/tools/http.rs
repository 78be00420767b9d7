//! A minimal HTTP/1.1 (RFC 9112) static file server and client over any `Read +
//! Write` stream, to show brisk carrying real programs' traffic (`curl` against the
//! server, `python3 -m http.server` against the client).
//!
//! Server: `GET` and `HEAD` of files under a root directory, one request per
//! connection (`Connection: close`), `Content-Length` bodies; 400 for malformed or
//! oversized requests, 403 for paths escaping the root, 404, 405. Client: `GET`, with
//! `Content-Length`, chunked, or read-to-close bodies. Header blocks are capped at
//! [`MAX_HEAD`] bytes and bodies at a caller-given limit.

use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::path::{Component, Path, PathBuf};

/// Longest request or response head accepted.
pub const MAX_HEAD: usize = 16 * 1024;

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, msg.into())
}

/// Reads one CRLF- (or LF-) terminated line, bounded by the remaining head budget.
fn read_line<R: BufRead>(r: &mut R, budget: &mut usize) -> io::Result<String> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(*budget as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        return Err(io::Error::new(
            ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    if n > *budget || line.last() != Some(&b'\n') {
        return Err(bad("head too long or truncated"));
    }
    *budget -= n;
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| bad("head is not UTF-8"))
}

/// Reads header lines up to the blank line; names lower-cased.
fn read_headers<R: BufRead>(r: &mut R, budget: &mut usize) -> io::Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let line = read_line(r, budget)?;
        if line.is_empty() {
            return Ok(headers);
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| bad("header without ':'"))?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
}

/// Maps a request target to a file under `root`, refusing anything that could leave it.
pub fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let decoded = percent_decode(path)?;
    let rel = Path::new(decoded.trim_start_matches('/'));
    let mut out = root.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    (!s.contains('\0')).then_some(s)
}

fn response_head(status: &str, len: u64) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nServer: brisk\r\nContent-Length: {len}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    )
    .into_bytes()
}

/// What the server did with one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    pub status: u16,
    pub path: String,
    pub body_bytes: u64,
}

/// The answer to one request: the response head, and the file to stream after it
/// with its length (`served.body_bytes` is that length until the body is sent).
#[derive(Debug)]
pub struct Reply {
    pub head: Vec<u8>,
    pub body: Option<(std::fs::File, u64)>,
    pub served: Served,
}

/// Whether `buf` holds a whole request head (up to its blank line).
pub fn head_complete(buf: &[u8]) -> bool {
    buf.windows(2).any(|w| w == b"\n\n") || buf.windows(4).any(|w| w == b"\r\n\r\n")
}

/// Reads one request head from `r` and decides the reply from files under `root`:
/// the shared logic of [`serve_one`] (blocking) and the lab's event-loop server
/// (`stack::serve`), which hands it the buffered head.
pub fn reply_to<R: BufRead>(r: &mut R, root: &Path) -> io::Result<Reply> {
    let mut budget = MAX_HEAD;
    let head = read_line(r, &mut budget).and_then(|l| {
        let h = read_headers(r, &mut budget)?;
        Ok((l, h))
    });
    let reply = |status: &str, code: u16, path: &str| Reply {
        head: response_head(status, 0),
        body: None,
        served: Served {
            status: code,
            path: path.to_string(),
            body_bytes: 0,
        },
    };
    let (line, _headers) = match head {
        Ok(x) => x,
        Err(e) if e.kind() == ErrorKind::InvalidData => {
            return Ok(reply("400 Bad Request", 400, ""))
        }
        Err(e) => return Err(e),
    };
    let mut parts = line.split_whitespace();
    let (method, target, version) = (parts.next(), parts.next(), parts.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return Ok(reply("400 Bad Request", 400, ""));
    };
    if !version.starts_with("HTTP/1.") {
        return Ok(reply("400 Bad Request", 400, target));
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Ok(reply("405 Method Not Allowed", 405, target)),
    };
    let Some(path) = resolve(root, target) else {
        return Ok(reply("403 Forbidden", 403, target));
    };
    let path = if path.is_dir() {
        path.join("index.html")
    } else {
        path
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) if f.metadata().is_ok_and(|m| m.is_file()) => f,
        _ => return Ok(reply("404 Not Found", 404, target)),
    };
    let len = file.metadata()?.len();
    Ok(Reply {
        head: response_head("200 OK", len),
        body: (!head_only).then_some((file, len)),
        served: Served {
            status: 200,
            path: target.to_string(),
            body_bytes: 0,
        },
    })
}

/// Serves one request on `s` from files under `root`, then returns (the caller
/// closes the connection).
pub fn serve_one<S: Read + Write>(s: &mut S, root: &Path) -> io::Result<Served> {
    let reply = reply_to(&mut BufReader::new(&mut *s), root)?;
    s.write_all(&reply.head)?;
    let mut served = reply.served;
    if let Some((mut file, len)) = reply.body {
        served.body_bytes = io::copy(&mut Read::take(&mut file, len), s)?;
    }
    Ok(served)
}

/// A parsed response.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `GET target` for `host` on `s` and reads the response (body at most `limit`
/// bytes).
pub fn get<S: Read + Write>(
    s: &mut S,
    host: &str,
    target: &str,
    limit: u64,
) -> io::Result<Response> {
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: brisk\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )?;
    s.flush()?;
    let mut r = BufReader::with_capacity(64 * 1024, s);
    let mut budget = MAX_HEAD;
    let status_line = read_line(&mut r, &mut budget)?;
    let mut parts = status_line.split_whitespace();
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("not an HTTP/1.x response: {status_line:?}")));
    }
    let status: u16 = parts
        .next()
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("bad status code"))?;
    let headers = read_headers(&mut r, &mut budget)?;
    let resp = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut b = MAX_HEAD;
            let size_line = read_line(&mut r, &mut b)?;
            let size = u64::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                let _ = read_headers(&mut r, &mut b)?; // trailers
                break;
            }
            if body.len() as u64 + size > limit {
                return Err(bad("body over the limit"));
            }
            (&mut r).take(size).read_to_end(&mut body)?;
            let mut crlf = MAX_HEAD;
            read_line(&mut r, &mut crlf)?;
        }
    } else if let Some(len) = resp.header("content-length") {
        let len: u64 = len.parse().map_err(|_| bad("bad Content-Length"))?;
        if len > limit {
            return Err(bad("body over the limit"));
        }
        (&mut r).take(len).read_to_end(&mut body)?;
        if body.len() as u64 != len {
            return Err(io::Error::new(ErrorKind::UnexpectedEof, "body truncated"));
        }
    } else {
        (&mut r)
            .take(limit.saturating_add(1))
            .read_to_end(&mut body)?;
        if body.len() as u64 > limit {
            return Err(bad("body over the limit"));
        }
    }
    Ok(Response { body, ..resp })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory duplex: reads from `input`, collects writes.
    struct Duplex {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }
    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.input.read(b)
        }
    }
    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.output.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn duplex(input: &[u8]) -> Duplex {
        Duplex {
            input: io::Cursor::new(input.to_vec()),
            output: Vec::new(),
        }
    }

    #[test]
    fn paths_cannot_escape_the_root() {
        let root = Path::new("/srv");
        assert_eq!(
            resolve(root, "/a/b.txt"),
            Some(PathBuf::from("/srv/a/b.txt"))
        );
        assert_eq!(resolve(root, "/a%20b?x=1"), Some(PathBuf::from("/srv/a b")));
        assert_eq!(resolve(root, "/../etc/passwd"), None);
        assert_eq!(resolve(root, "/a/%2e%2e/%2e%2e/x"), None);
        assert_eq!(resolve(root, "/%zz"), None);
    }

    #[test]
    fn server_sends_a_file_and_the_client_reads_it_back() {
        let dir = std::env::temp_dir().join(format!("brisk-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(dir.join("f.bin"), &data).unwrap();
        let mut s = duplex(b"GET /f.bin HTTP/1.1\r\nHost: x\r\n\r\n");
        let served = serve_one(&mut s, &dir).unwrap();
        assert_eq!(served.status, 200);
        assert_eq!(served.body_bytes, data.len() as u64);
        // Feed the server's output to the client parser.
        let mut c = duplex(&s.output);
        let resp = get(&mut c, "x", "/f.bin", 1 << 20).unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(resp.body, data);
        let mut s = duplex(b"GET /missing HTTP/1.1\r\n\r\n");
        assert_eq!(serve_one(&mut s, &dir).unwrap().status, 404);
        let mut s = duplex(b"POST /f.bin HTTP/1.1\r\n\r\n");
        assert_eq!(serve_one(&mut s, &dir).unwrap().status, 405);
        let mut s = duplex(b"GET /../x HTTP/1.1\r\n\r\n");
        assert_eq!(serve_one(&mut s, &dir).unwrap().status, 403);
        let mut s = duplex(&[b'A'; MAX_HEAD + 10]);
        assert_eq!(serve_one(&mut s, &dir).unwrap().status, 400);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn client_decodes_chunked_bodies() {
        let mut c = duplex(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
        let r = get(&mut c, "h", "/", 100).unwrap();
        assert_eq!(r.body, b"hello world");
        let mut c = duplex(b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nshort");
        assert!(get(&mut c, "h", "/", 100).is_err());
    }
}
