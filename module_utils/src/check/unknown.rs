//! The marker a check run shows where the real run will have a value it cannot know beforehand.

/// Stands, in predicted configs, diffs and results, exactly where PVE will put a value that
/// only exists once the write is applied (a MAC PVE generates, a volume it names at apply).
pub const KNOWN_AFTER_APPLY: &str = "(known after apply)";
