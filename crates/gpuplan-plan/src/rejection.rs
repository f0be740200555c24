use serde::Serialize;
use std::fmt;

/// The constraint that removed a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// The model does not fit in GPU memory (with the safety margin).
    Memory,
    Deadline,
    Budget,
    /// Above the hourly price cap.
    HourlyPrice,
    /// Time to first token or per output token above target.
    Latency,
    /// The configuration cannot be sized (no layout uses the GPUs, the batch does not split…).
    Layout,
    /// Too many GPUs or nodes for the limits given.
    Size,
    /// The network between nodes is too slow for multi-node training.
    Network,
    /// No price for the billing modes allowed.
    Price,
    /// Too few vCPUs or too little host memory per GPU for the minimums given.
    Host,
    /// No software stack of the accelerator runs this task, model or engine.
    Stack,
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Constraint::Memory => "memory",
            Constraint::Deadline => "deadline",
            Constraint::Budget => "budget",
            Constraint::HourlyPrice => "hourly price cap",
            Constraint::Latency => "latency targets",
            Constraint::Layout => "parallel layout",
            Constraint::Size => "size limits",
            Constraint::Network => "network",
            Constraint::Price => "price",
            Constraint::Host => "host resources",
            Constraint::Stack => "software stack",
        })
    }
}

/// A candidate removed by a constraint, with how far it missed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub candidate: String,
    pub constraint: Constraint,
    pub reason: String,
    /// How far over the limit, as a ratio (1.2 = 20 % over); smaller is a nearer miss.
    pub shortfall: f64,
    /// The value that would have made it pass (hours for a deadline, USD for a budget…).
    #[serde(skip)]
    pub needed: Option<f64>,
}

impl Rejection {
    /// A refusal no change of limits would lift (no stack, no price, no layout): never a
    /// near miss.
    pub fn outright(candidate: String, constraint: Constraint, reason: impl Into<String>) -> Rejection {
        Rejection {
            candidate,
            constraint,
            reason: reason.into(),
            shortfall: f64::INFINITY,
            needed: None,
        }
    }
}
