//! Values a check run cannot know: the marker that stands in their place.
pub const KNOWN_AFTER_APPLY: &str = "(known after apply)";
