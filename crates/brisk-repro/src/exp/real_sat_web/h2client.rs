//! brisk's HTTP/2 browser for REAL-WEB-4: one connection, TLS by rustls (the
//! simulator's `sat_tls` configs, ALPN "h2"), HTTP/2 framing (RFC 9113) written here
//! for the client's few needs, as the simulator's browser does it: the connection
//! preface and SETTINGS (stream window, stream cap, no push), the connection window
//! raised by WINDOW_UPDATE, the HTML on stream 1, then up to `cap` streams open,
//! WINDOW_UPDATEs once half a window is read. Requests are HPACK (RFC 7541) without
//! Huffman coding or indexing on our side (indexed `:method GET` and `:scheme https`,
//! literal `:path` and `:authority`); the server's header blocks are not decoded (every
//! body byte is checked instead, against the simulator's pattern).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::Instant;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
/// Our SETTINGS_MAX_FRAME_SIZE (the default): a larger frame is the peer's error.
const MAX_FRAME: usize = 16_384;

fn frame(out: &mut Vec<u8>, ty: u8, flags: u8, stream: u32, payload: &[u8]) {
    let n = payload.len() as u32;
    out.extend_from_slice(&n.to_be_bytes()[1..]);
    out.push(ty);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// RFC 7541 §6.2.2: literal header field without indexing, indexed name (`idx` < 15),
/// value not Huffman-coded (< 127 bytes).
fn literal(out: &mut Vec<u8>, idx: u8, value: &str) {
    out.push(idx);
    out.push(value.len() as u8);
    out.extend_from_slice(value.as_bytes());
}

/// A GET header block: `:method GET` (static index 2), `:scheme https` (7), `:path`
/// (4), `:authority` (1).
pub fn get_block(path: &str, authority: &str) -> Vec<u8> {
    let mut v = vec![0x82, 0x87];
    literal(&mut v, 4, path);
    literal(&mut v, 1, authority);
    v
}

/// The browser's HTTP/2 settings.
pub struct Browser<'a> {
    /// Most streams open at once.
    pub cap: usize,
    /// Initial stream window (SETTINGS) and connection window (WINDOW_UPDATE), bytes.
    pub stream_window: u32,
    pub conn_window: u32,
    pub authority: &'a str,
}

/// Loads the page over `s` (TLS already set up or set up on first write): returns
/// (PLT from `t0` in seconds, every body intact).
pub fn load<S: Read + Write>(
    s: &mut S,
    sizes: &[usize],
    body_byte: fn(usize, usize) -> u8,
    b: &Browser<'_>,
    t0: Instant,
) -> Result<(f64, bool), String> {
    let (cap, stream_window, conn_window, authority) =
        (b.cap, b.stream_window, b.conn_window, b.authority);
    let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
    let mut out = PREFACE.to_vec();
    let mut settings = Vec::new();
    for (id, v) in [(0x2u16, 0u32), (0x3, cap as u32), (0x4, stream_window)] {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&v.to_be_bytes());
    }
    frame(&mut out, SETTINGS, 0, 0, &settings);
    let inc = conn_window.saturating_sub(65_535);
    if inc > 0 {
        frame(&mut out, WINDOW_UPDATE, 0, 0, &inc.to_be_bytes());
    }
    // Stream id -> (object, bytes read, bytes read since its last WINDOW_UPDATE).
    let mut open: HashMap<u32, (usize, usize, u64)> = HashMap::new();
    let mut next = 0usize;
    let request = |out: &mut Vec<u8>, open: &mut HashMap<u32, (usize, usize, u64)>, k: usize| {
        let sid = 2 * k as u32 + 1;
        frame(
            out,
            HEADERS,
            END_STREAM | END_HEADERS,
            sid,
            &get_block(&format!("/{k}"), authority),
        );
        open.insert(sid, (k, 0, 0));
    };
    request(&mut out, &mut open, 0);
    next += 1;
    let mut peer_cap = usize::MAX;
    let mut html_done = false;
    let mut done = 0usize;
    let mut intact = true;
    let mut last = t0;
    let mut conn_unacked = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while done < sizes.len() {
        if html_done {
            while next < sizes.len() && open.len() < cap.min(peer_cap) {
                request(&mut out, &mut open, next);
                next += 1;
            }
        }
        if !out.is_empty() {
            s.write_all(&out).map_err(|e| io("write", e))?;
            s.flush().map_err(|e| io("flush", e))?;
            out.clear();
        }
        let n = s.read(&mut chunk).map_err(|e| io("read", e))?;
        if n == 0 {
            return Err(format!("connection closed after {done} objects"));
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut at = 0;
        while buf.len() - at >= 9 {
            let h = &buf[at..at + 9];
            let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
            if len > MAX_FRAME {
                return Err(format!("frame of {len} bytes (most 16384)"));
            }
            if buf.len() - at < 9 + len {
                break;
            }
            let (ty, flags) = (h[3], h[4]);
            let sid = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            let p = &buf[at + 9..at + 9 + len];
            at += 9 + len;
            match ty {
                DATA => {
                    let data = if flags & PADDED != 0 {
                        let pad = usize::from(*p.first().ok_or("padded DATA without length")?);
                        p.get(1..p.len().saturating_sub(pad)).ok_or("bad padding")?
                    } else {
                        p
                    };
                    let Some(st) = open.get_mut(&sid) else {
                        return Err(format!("DATA on stream {sid}, not open"));
                    };
                    let (k, got) = (st.0, st.1);
                    let size = sizes[k];
                    if got + data.len() > size {
                        return Err(format!("object {k}: more than {size} bytes"));
                    }
                    intact &= data
                        .iter()
                        .enumerate()
                        .all(|(j, &b)| b == body_byte(k, got + j));
                    st.1 += data.len();
                    st.2 += len as u64;
                    conn_unacked += len as u64;
                    if conn_unacked >= u64::from(conn_window / 2) {
                        frame(
                            &mut out,
                            WINDOW_UPDATE,
                            0,
                            0,
                            &(conn_unacked as u32).to_be_bytes(),
                        );
                        conn_unacked = 0;
                    }
                    if st.1 < size && st.2 >= u64::from(stream_window / 2) {
                        frame(
                            &mut out,
                            WINDOW_UPDATE,
                            0,
                            sid,
                            &(st.2 as u32).to_be_bytes(),
                        );
                        st.2 = 0;
                    }
                    if flags & END_STREAM != 0 {
                        intact &= st.1 == size;
                        open.remove(&sid);
                        done += 1;
                        last = Instant::now();
                        html_done |= k == 0;
                    }
                }
                // A response without a body here is an error response (404).
                HEADERS if flags & END_STREAM != 0 => {
                    return Err(format!("stream {sid} answered without a body"));
                }
                SETTINGS if flags & ACK == 0 => {
                    for s in p.chunks_exact(6) {
                        if u16::from_be_bytes([s[0], s[1]]) == 0x3 {
                            peer_cap = u32::from_be_bytes([s[2], s[3], s[4], s[5]]) as usize;
                        }
                    }
                    frame(&mut out, SETTINGS, ACK, 0, &[]);
                }
                PING if flags & ACK == 0 => frame(&mut out, PING, ACK, 0, p),
                GOAWAY => return Err("server sent GOAWAY".into()),
                RST_STREAM => return Err(format!("server reset stream {sid}")),
                _ => {} // SETTINGS ACK, WINDOW_UPDATE, PRIORITY, ...: nothing to do.
            }
        }
        buf.drain(..at);
    }
    Ok(((last - t0).as_secs_f64(), intact))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_block_is_valid_hpack_without_huffman() {
        let b = get_block("/12", "www.example.com");
        assert_eq!(&b[..2], &[0x82, 0x87]);
        assert_eq!(&b[2..4], &[0x04, 3]);
        assert_eq!(&b[4..7], b"/12");
        assert_eq!(&b[7..9], &[0x01, 15]);
        assert_eq!(&b[9..], b"www.example.com");
    }
}
