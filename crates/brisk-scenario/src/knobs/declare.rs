//! The macro that turns the one knob table (`super::table`) into the flat struct, the
//! grouped tables, the fold of grouped onto flat keys, the `brisk_tcp::Config` fields
//! and the Linux column. Each knob is one line of that table.
//!
//! Entry grammar (per knob):
//!
//! ```text
//! flat_key [as nested_key] : Type => APPLY, linux LINUX;
//! APPLY: set(config.path)   the Config field takes the value (via `KnobValue`)
//!        some(config.path)  the Config field is an `Option` and takes `Some(value)`
//!        mechanism          a mechanism builder reads it (see `super::build`)
//! LINUX: kernel             a Linux flow hands it to its kernel socket (brisk-emu)
//!        refuse_set(why)    a Linux flow with it set is an error naming it
//!        refuse_on(why)     a Linux flow with it switched on is an error naming it
//!        unchecked          not checked for Linux flows (today's rule; the kernel
//!                           runs without it)
//! ```

/// Writes a knob's value into a `brisk_tcp::Config`.
macro_rules! apply_knob {
    ($c:ident, $v:expr, set $($f:ident).+) => {
        if let Some(v) = $v {
            $c.$($f).+ = $crate::knobs::KnobValue::config(v);
        }
    };
    ($c:ident, $v:expr, some $($f:ident).+) => {
        if let Some(v) = $v {
            $c.$($f).+ = Some($crate::knobs::KnobValue::config(v));
        }
    };
    ($c:ident, $v:expr, mechanism) => {};
}

/// A knob's Linux column: `Some((key, why))` when a Linux flow cannot take it.
macro_rules! linux_knob {
    ($s:ident, $k:ident, kernel) => {};
    ($s:ident, $k:ident, unchecked) => {};
    ($s:ident, $k:ident, refuse_set($why:expr)) => {
        if $s.$k.is_some() {
            return Some((stringify!($k), $why));
        }
    };
    ($s:ident, $k:ident, refuse_on($why:expr)) => {
        if $crate::knobs::KnobOn::is_on(&$s.$k) {
            return Some((stringify!($k), $why));
        }
    };
}

/// A knob's kernel column: whether a Linux flow takes it.
macro_rules! kernel_knob {
    (kernel) => {
        true
    };
    ($($other:tt)*) => {
        false
    };
}

/// The whole vocabulary of `[flow.tcp]` from one table; see the module doc.
macro_rules! tcp_knobs {
    (
        flat {
            $( $(#[$fm:meta])* $fk:ident : $ft:ty
               => $fa:ident $(($($fp:ident).+))? , linux $fl:ident $(($fw:expr))? ; )*
        }
        groups {
            $( $(#[$gm:meta])* $g:ident : $G:ident {
                $( $(#[$km:meta])* $k:ident as $nk:ident : $t:ty
                   => $a:ident $(($($p:ident).+))? , linux $l:ident $(($w:expr))? ; )*
            } )*
        }
        switches {
            $( $(#[$sm:meta])* $s:ident : $S:ident ($ST:ident) , linux $sl:ident $(($sw:expr))? {
                $( $(#[$skm:meta])* $sk:ident as $snk:ident : $st:ty
                   => $sa:ident $(($($sp:ident).+))? , linux $skl:ident $(($skw:expr))? ; )*
            } )*
        }
    ) => {
        /// Per-flow TCP knobs. Each flat key maps onto the `brisk_tcp::Config` field of
        /// the same name (in its mechanism's group); the same knobs can also be written
        /// as tables named after those groups (`[flow.tcp.recovery]`, `[flow.tcp.ack]`,
        /// ..., `[flow.tcp.delay_correlation]`), which [`TcpKnobs::normalize`] folds
        /// onto the flat keys. A knob set both ways is an error naming both. Declared
        /// once, in `knobs/table.rs`.
        #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct TcpKnobs {
            $( $(#[$fm])* pub $fk: Option<$ft>, )*
            $( $( $(#[$km])* pub $k: Option<$t>, )* )*
            $(
                $(#[$sm])* pub $s: Option<$S>,
                $( $(#[$skm])* pub $sk: Option<$st>, )*
            )*
            $( $(#[$gm])* pub $g: Option<$G>, )*
        }

        $(
            $(#[$gm])*
            #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
            #[serde(deny_unknown_fields)]
            pub struct $G {
                $( pub $nk: Option<$t>, )*
            }
        )*

        $(
            $(#[$sm])*
            #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize, PartialEq)]
            #[serde(deny_unknown_fields)]
            pub struct $ST {
                $( pub $snk: Option<$st>, )*
            }
        )*

        impl TcpKnobs {
            /// Every flat key, in table order (the knobs `[flow.tcp]` accepts besides
            /// the group tables).
            pub const FLAT_KEYS: &'static [&'static str] = &[
                $( stringify!($fk), )*
                $( $( stringify!($k), )* )*
                $( stringify!($s), $( stringify!($sk), )* )*
            ];

            /// The keys a Linux flow hands to its kernel (brisk-emu's `LinuxKnobs`).
            pub const KERNEL_KEYS: &'static [&'static str] = {
                const ALL: &[(&str, bool)] = &[
                    $( (stringify!($fk), kernel_knob!($fl)), )*
                    $( $( (stringify!($k), kernel_knob!($l)), )* )*
                    $( (stringify!($s), kernel_knob!($sl)), $( (stringify!($sk), kernel_knob!($skl)), )* )*
                ];
                const N: usize = {
                    let mut n = 0;
                    let mut i = 0;
                    while i < ALL.len() {
                        if ALL[i].1 {
                            n += 1;
                        }
                        i += 1;
                    }
                    n
                };
                const KEYS: [&str; N] = {
                    let mut out = [""; N];
                    let (mut i, mut j) = (0, 0);
                    while i < ALL.len() {
                        if ALL[i].1 {
                            out[j] = ALL[i].0;
                            j += 1;
                        }
                        i += 1;
                    }
                    out
                };
                &KEYS
            };

            /// Folds the grouped tables (and the switches' tables) onto the flat keys,
            /// so validation and `to_config` see one form. Errors are `(field,
            /// message)` relative to the flow.
            pub fn normalize(&mut self) -> Result<(), (String, String)> {
                $(
                    if let Some(g) = self.$g.take() {
                        $(
                            fold(
                                &mut self.$k,
                                g.$nk,
                                stringify!($k),
                                concat!(stringify!($g), ".", stringify!($nk)),
                            )?;
                        )*
                    }
                )*
                self.normalize_ecn();
                $(
                    if let Some(SwitchOrTable::Table(t)) = self.$s.clone() {
                        $(
                            fold(
                                &mut self.$sk,
                                t.$snk,
                                stringify!($sk),
                                concat!(stringify!($s), ".", stringify!($snk)),
                            )?;
                        )*
                        self.$s = Some(SwitchOrTable::Switch(true));
                    }
                )*
                Ok(())
            }

            /// The plain knobs written into `c` (the mechanism knobs are built by
            /// `to_config` from their builders).
            fn apply_fields(&self, c: &mut brisk_tcp::Config) {
                $( apply_knob!(c, self.$fk, $fa $($($fp).+)?); )*
                $( $( apply_knob!(c, self.$k, $a $($($p).+)?); )* )*
                $( $( apply_knob!(c, self.$sk, $sa $($($sp).+)?); )* )*
            }

            /// The first knob set here that a Linux flow cannot take, with why:
            /// `(flat key, reason)`.
            pub fn linux_refusal(&self) -> Option<(&'static str, &'static str)> {
                $( linux_knob!(self, $fk, $fl $(($fw))?); )*
                $( $( linux_knob!(self, $k, $l $(($w))?); )* )*
                $(
                    linux_knob!(self, $s, $sl $(($sw))?);
                    $( linux_knob!(self, $sk, $skl $(($skw))?); )*
                )*
                None
            }
        }
    };
}
