//! Client features (`client/index.mdx`): elicitation, sampling and roots. In this revision the
//! server asks for them only inside an `InputRequiredResult` (see [`crate::patterns::mrtr`]).

pub mod elicitation;
pub mod roots;
pub mod sampling;
