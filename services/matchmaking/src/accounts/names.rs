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

/// The same kind of names for Korean visitors ("날쌘 수달 42"): one word
/// each, so a name is always three words.
const ADJECTIVES_KO: [&str; 32] = [
    "날쌘",
    "조용한",
    "용감한",
    "영리한",
    "상냥한",
    "행운의",
    "명랑한",
    "재빠른",
    "느긋한",
    "대담한",
    "차분한",
    "열정적인",
    "행복한",
    "유쾌한",
    "예리한",
    "활발한",
    "힘센",
    "고귀한",
    "씩씩한",
    "당당한",
    "빠른",
    "슬기로운",
    "듬직한",
    "화창한",
    "깔끔한",
    "기발한",
    "현명한",
    "상큼한",
    "밝은",
    "엉뚱한",
    "과감한",
    "늠름한",
];

const ANIMALS_KO: [&str; 32] = [
    "수달",
    "왜가리",
    "매",
    "오소리",
    "스라소니",
    "판다",
    "도마뱀",
    "따오기",
    "코알라",
    "담비",
    "도롱뇽",
    "표범",
    "펭귄",
    "쿼카",
    "까마귀",
    "물범",
    "너구리",
    "고슴도치",
    "다람쥐",
    "해달",
    "바다코끼리",
    "야크",
    "얼룩말",
    "비버",
    "두루미",
    "부엉이",
    "백로",
    "족제비",
    "가젤",
    "토끼",
    "여우",
    "황조롱이",
];

/// Which words a guest's name is made of: the visitor's language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum NameLanguage {
    #[default]
    English,
    Korean,
}

impl NameLanguage {
    /// From an `Accept-Language` header: Korean when Korean is the first
    /// language named, English otherwise (the client sends its own
    /// interface language first).
    pub(crate) fn from_accept_language(header: Option<&str>) -> NameLanguage {
        let first = header.and_then(|value| value.split(',').next()).map(|tag| {
            tag.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        match first.as_deref() {
            Some(tag) if tag == "ko" || tag.starts_with("ko-") => NameLanguage::Korean,
            _ => NameLanguage::English,
        }
    }
}

/// The guest name for `draw`: 32 adjectives x 32 animals x 1000 numbers,
/// about 1M names, of which the low bits of `draw` pick one.
pub(crate) fn guest_name(draw: u64, language: NameLanguage) -> String {
    let (adjectives, animals) = match language {
        NameLanguage::English => (&ADJECTIVES, &ANIMALS),
        NameLanguage::Korean => (&ADJECTIVES_KO, &ANIMALS_KO),
    };
    let adjective = adjectives[(draw % 32) as usize];
    let animal = animals[(draw / 32 % 32) as usize];
    let number = draw / 1024 % 1000;
    format!("{adjective} {animal} {number}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_friendly_and_fit_the_column() {
        assert_eq!(guest_name(0, NameLanguage::English), "Swift Otter 0");
        assert_eq!(guest_name(0, NameLanguage::Korean), "날쌘 수달 0");
        for (draw, language) in [1, 77, 1 << 40, u64::MAX]
            .into_iter()
            .flat_map(|draw| [(draw, NameLanguage::English), (draw, NameLanguage::Korean)])
        {
            let name = guest_name(draw, language);
            assert!(name.len() <= 40, "{name}");
            assert_eq!(name.split(' ').count(), 3, "{name}");
        }
    }

    #[test]
    fn distinct_draws_below_a_million_give_distinct_names() {
        for language in [NameLanguage::English, NameLanguage::Korean] {
            let names: std::collections::HashSet<String> = (0..32 * 32 * 1000)
                .map(|draw| guest_name(draw, language))
                .collect();
            assert_eq!(names.len(), 32 * 32 * 1000);
        }
    }

    #[test]
    fn korean_names_go_to_visitors_whose_first_language_is_korean() {
        for (header, language) in [
            (Some("ko"), NameLanguage::Korean),
            (Some("ko-KR,ko;q=0.9,en;q=0.8"), NameLanguage::Korean),
            (Some("KO-kr"), NameLanguage::Korean),
            (Some("en-US,ko;q=0.9"), NameLanguage::English),
            (Some("kok"), NameLanguage::English),
            (Some(""), NameLanguage::English),
            (None, NameLanguage::English),
        ] {
            assert_eq!(
                NameLanguage::from_accept_language(header),
                language,
                "{header:?}"
            );
        }
    }
}
