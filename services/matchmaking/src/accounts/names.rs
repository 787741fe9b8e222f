//! Friendly display names for guests: "Swift Otter 42". Drawn from a number
//! the caller supplies (random in the service, fixed in tests), so this
//! module needs no randomness of its own; on a clash with an existing name
//! the caller draws again.

const ADJECTIVES: [&str; 32] = [
    "Swift", "Quiet", "Brave", "Clever", "Gentle", "Lucky", "Merry", "Nimble", "Patient", "Bold",
    "Calm", "Eager", "Happy", "Jolly", "Keen", "Lively", "Mighty", "Noble", "Plucky", "Proud",
    "Rapid", "Sly", "Steady", "Sunny", "Tidy", "Witty", "Wise", "Zesty", "Bright", "Curious",
    "Daring", "Fearless",
];

const ANIMALS: [&str; 32] = [
    "Otter", "Heron", "Falcon", "Badger", "Lynx", "Panda", "Gecko", "Ibis", "Koala", "Lemur",
    "Marten", "Newt", "Ocelot", "Puffin", "Quokka", "Raven", "Seal", "Tapir", "Urchin", "Vole",
    "Walrus", "Yak", "Zebra", "Beaver", "Crane", "Dingo", "Egret", "Ferret", "Gazelle", "Hare",
    "Jackal", "Kestrel",
];

/// The guest name for `draw`: 32 adjectives x 32 animals x 1000 numbers,
/// about 1M names, of which the low bits of `draw` pick one.
pub(crate) fn guest_name(draw: u64) -> String {
    let adjective = ADJECTIVES[(draw % 32) as usize];
    let animal = ANIMALS[(draw / 32 % 32) as usize];
    let number = draw / 1024 % 1000;
    format!("{adjective} {animal} {number}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_friendly_and_fit_the_column() {
        assert_eq!(guest_name(0), "Swift Otter 0");
        for draw in [1, 77, 1 << 40, u64::MAX] {
            let name = guest_name(draw);
            assert!(name.len() <= 40, "{name}");
            assert_eq!(name.split(' ').count(), 3, "{name}");
        }
    }

    #[test]
    fn distinct_draws_below_a_million_give_distinct_names() {
        let names: std::collections::HashSet<String> =
            (0..32 * 32 * 1000).map(guest_name).collect();
        assert_eq!(names.len(), 32 * 32 * 1000);
    }
}
