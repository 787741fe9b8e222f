//! Free text that people write and others read: tournament names, display
//! names a moderator gives, reasons, notes, report texts. One set of rules
//! for every such field, applied where the request is parsed.
//!
//! What is refused is what hides or disguises text rather than says
//! something: control characters (a NUL byte is not even storable in
//! Postgres text), format characters (right-to-left overrides that turn
//! `gpj.exe` into `exe.jpg`, zero-width spaces that make two names look
//! the same), private-use and unassigned code points, characters that
//! draw nothing (Hangul fillers, the braille blank), and piles of
//! combining marks. Text is put in Unicode's composed form (NFC) first, so
//! that two spellings of one name are one name; runs of spaces are one
//! space and the ends are trimmed.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether a field is one line (names) or may hold paragraphs (notes,
/// report texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    One,
    Many,
}

/// The rules of one field: its name in messages, its length in
/// characters (after cleaning) and its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextField {
    pub name: &'static str,
    pub min_chars: usize,
    pub max_chars: usize,
    pub lines: Lines,
}

/// Why a text was refused: said to the person who wrote it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("`{field}` is {min} to {max} characters")]
    Length {
        field: &'static str,
        min: usize,
        max: usize,
    },
    #[error(
        "`{field}` may not contain control, invisible or formatting characters (U+{code:04X} at character {at})"
    )]
    Hidden {
        field: &'static str,
        code: u32,
        at: usize,
    },
    #[error("`{field}` has too many combining marks in a row (at character {at})")]
    Marks { field: &'static str, at: usize },
}

/// Combining marks allowed on one base character: enough for any script
/// (Vietnamese stacks two, some Indic clusters three), not for "Zalgo"
/// text that spills over the lines around it.
const MAX_MARKS: usize = 4;

impl TextField {
    pub const fn line(name: &'static str, min_chars: usize, max_chars: usize) -> TextField {
        TextField {
            name,
            min_chars,
            max_chars,
            lines: Lines::One,
        }
    }

    pub const fn paragraphs(name: &'static str, min_chars: usize, max_chars: usize) -> TextField {
        TextField {
            name,
            min_chars,
            max_chars,
            lines: Lines::Many,
        }
    }

    /// The text as it will be kept, or why it cannot be.
    pub fn clean(&self, text: &str) -> Result<String, TextError> {
        let mut kept = String::with_capacity(text.len());
        let mut marks = 0;
        // What separates the last character kept from the next: nothing,
        // a space, or one or two line ends (at most one blank line).
        let mut space = false;
        let mut newlines = 0usize;
        let mut previous = None;
        for (index, c) in text.nfc().enumerate() {
            let at = index + 1;
            let after_cr = previous == Some('\r');
            previous = Some(c);
            if c == '\n' || c == '\r' {
                if self.lines == Lines::One {
                    return Err(self.hidden(c, at));
                }
                // "\r\n" is one line end.
                if !(c == '\n' && after_cr) {
                    newlines = (newlines + 1).min(2);
                }
                marks = 0;
                continue;
            }
            // Every kind of space is one space, but the ideographic space,
            // which is as wide as the letters it stands between.
            if c == '\t'
                || (c != '\u{3000}' && c.general_category() == GeneralCategory::SpaceSeparator)
            {
                space = true;
                marks = 0;
                continue;
            }
            if refused(c) {
                return Err(self.hidden(c, at));
            }
            marks = if is_mark(c) { marks + 1 } else { 0 };
            if marks > MAX_MARKS {
                return Err(TextError::Marks {
                    field: self.name,
                    at,
                });
            }
            if !kept.is_empty() {
                if newlines > 0 {
                    kept.extend(std::iter::repeat_n('\n', newlines));
                } else if space {
                    kept.push(' ');
                }
            }
            newlines = 0;
            space = false;
            kept.push(c);
        }
        let length = kept.chars().count();
        if length < self.min_chars || length > self.max_chars {
            return Err(TextError::Length {
                field: self.name,
                min: self.min_chars,
                max: self.max_chars,
            });
        }
        Ok(kept)
    }

    fn hidden(&self, c: char, at: usize) -> TextError {
        TextError::Hidden {
            field: self.name,
            code: u32::from(c),
            at,
        }
    }
}

fn is_mark(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
    )
}

/// Characters that hide, disguise or draw nothing.
fn refused(c: char) -> bool {
    use GeneralCategory::*;
    match c.general_category() {
        Control | Format | PrivateUse | Surrogate | Unassigned | LineSeparator
        | ParagraphSeparator => true,
        // Letters by their category that draw nothing: the Hangul fillers
        // and the half-width filler, the braille blank; and the combining
        // grapheme joiner, a mark that joins nothing visible.
        _ => matches!(
            c,
            '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}' | '\u{034F}'
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: TextField = TextField::line("name", 1, 20);
    const NOTE: TextField = TextField::paragraphs("text", 0, 50);

    #[test]
    fn ordinary_text_in_any_script_is_kept() {
        for text in [
            "Spring Arena",
            "봄 토너먼트",
            "Tiếng Việt",
            "日本語の大会",
            "Ωmega ☀ 🎉",
        ] {
            assert_eq!(NAME.clean(text).unwrap(), text);
        }
    }

    #[test]
    fn spaces_are_folded_and_trimmed_and_forms_composed() {
        assert_eq!(NAME.clean("  a \t  b\u{00A0}c  ").unwrap(), "a b c");
        // "e" + combining acute is the one character "é".
        assert_eq!(NAME.clean("Cafe\u{0301}").unwrap(), "Café");
        assert_eq!(
            NOTE.clean(" one\r\ntwo\n\n\n\nthree \n").unwrap(),
            "one\ntwo\n\nthree"
        );
    }

    #[test]
    fn what_hides_or_disguises_text_is_refused() {
        for (text, code) in [
            ("a\u{0000}b", 0x0000),
            ("a\u{0007}b", 0x0007),
            ("gpj\u{202E}exe", 0x202E),
            ("ad\u{200B}min", 0x200B),
            ("ad\u{200D}min", 0x200D),
            ("\u{FEFF}name", 0xFEFF),
            ("x\u{2066}y", 0x2066),
            ("soft\u{00AD}hyphen", 0x00AD),
            ("\u{3164}", 0x3164),
            ("a\u{2800}b", 0x2800),
            ("tag\u{E0041}", 0xE0041),
            ("private\u{E000}", 0xE000),
            ("line\u{2028}sep", 0x2028),
        ] {
            match NAME.clean(text) {
                Err(TextError::Hidden { code: found, .. }) => assert_eq!(found, code, "{text:?}"),
                other => panic!("{text:?} gave {other:?}"),
            }
        }
        assert!(matches!(
            NAME.clean("two\nlines"),
            Err(TextError::Hidden { code: 0x0A, .. })
        ));
        assert!(NOTE.clean("two\nlines").is_ok());
        assert!(matches!(
            NOTE.clean("nul\u{0}"),
            Err(TextError::Hidden { code: 0, .. })
        ));
    }

    #[test]
    fn lengths_count_characters_after_cleaning() {
        assert!(matches!(NAME.clean("   "), Err(TextError::Length { .. })));
        assert!(NAME.clean(&"가".repeat(20)).is_ok());
        assert!(matches!(
            NAME.clean(&"가".repeat(21)),
            Err(TextError::Length { .. })
        ));
        assert_eq!(NOTE.clean("").unwrap(), "");
    }

    #[test]
    fn a_pile_of_combining_marks_is_refused_but_real_accents_are_not() {
        assert!(NAME.clean("Nguyễn").is_ok());
        let zalgo = format!("a{}", "\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}\u{0306}");
        assert!(matches!(NAME.clean(&zalgo), Err(TextError::Marks { .. })));
    }
}
