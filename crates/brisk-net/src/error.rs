//! Configuration errors. Elements never fail at run time (a packet they cannot take is
//! dropped and counted), so the only errors are bad parameters, each naming its field.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NetError {
    /// A parameter is out of range; `field` is its config name.
    #[error("invalid {field} = {value}: {reason}")]
    Invalid {
        field: &'static str,
        value: String,
        reason: &'static str,
    },
}

impl NetError {
    pub(crate) fn invalid(field: &'static str, value: impl ToString, reason: &'static str) -> Self {
        NetError::Invalid {
            field,
            value: value.to_string(),
            reason,
        }
    }
}

/// Checks that `p` is a probability (finite, in `[0, 1]`).
pub(crate) fn check_prob(field: &'static str, p: f64) -> Result<f64, NetError> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(NetError::invalid(
            field,
            p,
            "must be a probability in [0, 1]",
        ))
    }
}
