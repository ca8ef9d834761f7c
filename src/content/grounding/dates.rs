//! Dates in a text: whether it mentions one at all, and the dates it writes out in full.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::pattern::{Found, Pattern};

use super::words::{TRIM, lowercase_words};

/// Month names and their common abbreviations in German, French, Spanish, Italian, Portuguese
/// and Dutch, and English abbreviations (the English names are [`ENGLISH_MONTHS`]).
const MONTH_WORDS: &[&str] = &[
    "jan",
    "feb",
    "febr",
    "fév",
    "mär",
    "mar",
    "apr",
    "abr",
    "avr",
    "mai",
    "may",
    "mei",
    "mag",
    "jun",
    "juin",
    "giu",
    "jul",
    "juil",
    "lug",
    "aug",
    "ago",
    "aoû",
    "sep",
    "sept",
    "set",
    "okt",
    "oct",
    "ott",
    "out",
    "nov",
    "dec",
    "dez",
    "déc",
    "dic",
    "januar",
    "februar",
    "märz",
    "juni",
    "juli",
    "oktober",
    "dezember",
    "janvier",
    "février",
    "mars",
    "avril",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
    "gennaio",
    "febbraio",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "settembre",
    "ottobre",
    "dicembre",
    "janeiro",
    "fevereiro",
    "março",
    "maio",
    "junho",
    "julho",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
    "januari",
    "februari",
    "maart",
    "augustus",
];

/// Weekday names in the same languages.
const WEEKDAY_WORDS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mon",
    "tue",
    "tues",
    "wed",
    "thu",
    "thur",
    "thurs",
    "fri",
    "sat",
    "sun",
    "montag",
    "dienstag",
    "mittwoch",
    "donnerstag",
    "freitag",
    "samstag",
    "sonntag",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "lunes",
    "martes",
    "miércoles",
    "jueves",
    "viernes",
    "sábado",
    "domingo",
    "lunedì",
    "martedì",
    "mercoledì",
    "giovedì",
    "venerdì",
    "sabato",
    "segunda",
    "terça",
    "quarta",
    "quinta",
    "sexta",
    "maandag",
    "dinsdag",
    "woensdag",
    "donderdag",
    "vrijdag",
    "zaterdag",
    "zondag",
];

/// Days and times given relative to now, in the same languages.
const RELATIVE_WORDS: &[&str] = &[
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "now",
    "ago",
    "noon",
    "midnight",
    "next",
    "last",
    "heute",
    "morgen",
    "gestern",
    "übermorgen",
    "vorgestern",
    "jetzt",
    "aujourd'hui",
    "demain",
    "hier",
    "maintenant",
    "hoy",
    "mañana",
    "ayer",
    "ahora",
    "oggi",
    "domani",
    "ieri",
    "adesso",
    "hoje",
    "amanhã",
    "ontem",
    "agora",
    "vandaag",
    "gisteren",
    "nu",
];

/// Words that place a day against the current one whatever stands around them (unlike `now`,
/// `next` or `last`, which formal texts use for other things: "now, therefore", "the last
/// day").
const CLOCK_WORDS: &[&str] = &[
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "ago",
    "heute",
    "gestern",
    "morgen",
    "übermorgen",
    "vorgestern",
    "aujourd'hui",
    "demain",
    "hoy",
    "mañana",
    "ayer",
    "oggi",
    "domani",
    "ieri",
    "hoje",
    "amanhã",
    "ontem",
    "vandaag",
    "gisteren",
];

/// Whether `text` gives a day only a reader who knows the current date can resolve: a word of
/// [`CLOCK_WORDS`], a weekday named in full, or `next`/`last`/`this` before a week, month, year
/// or weekday. A text with none of these does not need the current date, and a model shown it
/// anyway may write it for a date the text gives otherwise.
pub fn needs_the_current_date(text: &str) -> bool {
    let units = ["week", "month", "year", "weekend"];
    let weekday = |word: &str| WEEKDAY_WORDS.contains(&word) && word.len() > 4;
    let mut after_relative = false;
    words(text).any(|word| {
        let needs = CLOCK_WORDS.contains(&&*word)
            || weekday(&word)
            || (after_relative && units.contains(&&*word));
        after_relative = matches!(&*word, "next" | "last" | "this");
        needs
    })
}

/// The English months a date is read from, by number.
const ENGLISH_MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    lowercase_words(text, &['\''])
}

/// Whether `text` mentions a date in any form a model could read one from: a year (`1999`),
/// numbers joined by date separators (`2025-06-03`, `3/4/25`, `3.4.`), a month or weekday
/// name, or a relative day. A text with none of these cannot give a date.
pub fn mentions_a_date(text: &str) -> bool {
    let named = words(text).any(|word| {
        [MONTH_WORDS, ENGLISH_MONTHS, WEEKDAY_WORDS, RELATIVE_WORDS]
            .iter()
            .any(|list| list.contains(&&*word))
            || (word.len() == 4
                && word.bytes().all(|b| b.is_ascii_digit())
                && matches!(word.as_bytes()[0], b'1' | b'2'))
    });
    let bytes = text.as_bytes();
    named
        || bytes.windows(3).any(|window| {
            window[0].is_ascii_digit()
                && matches!(window[1], b'-' | b'/' | b'.')
                && window[2].is_ascii_digit()
        }) && !numbers_only_decimal(text)
}

/// Whether every digit-separator-digit run in `text` is a decimal number (`3.5 kg`), which
/// is no date.
fn numbers_only_decimal(text: &str) -> bool {
    text.split_whitespace().all(|word| {
        let word = word.trim_matches(TRIM);
        let separators = word
            .bytes()
            .filter(|b| matches!(b, b'-' | b'/' | b'.'))
            .count();
        let digits_and_separators = word
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'/' | b'.' | b','));
        !(digits_and_separators && separators >= 1) || (separators == 1 && word.contains('.'))
    })
}

/// The dates `text` writes out in full, as `date` (`2025-04-14`) or, with `with_time`, as
/// `date-time` values (`2025-01-05T09:15:00Z`): ISO dates and instants as written, and English
/// `14 April 2025` / `April 14, 2025`, with a following `at 09:15 UTC` for instants.
///
/// `None` when the text also points at a day in a way only a reader can resolve — a relative
/// day, a weekday, a month and day without a year, `3/4/25`, a month in another language, or,
/// for instants, a date without a time and zone: the model then works it out unaided.
pub(super) fn written_dates(text: &str, with_time: bool) -> Option<Vec<String>> {
    let lower = text.to_lowercase();
    let unreadable = words(&lower).any(|word| {
        WEEKDAY_WORDS[..7].contains(&&*word)
            || RELATIVE_WORDS.contains(&&*word)
            || (MONTH_WORDS.contains(&&*word) && word.len() > 4)
    });
    if unreadable || patterns().ambiguous.is_match(&lower) {
        return None;
    }
    let found = full_dates(&lower, with_time);
    let covered: Vec<std::ops::Range<usize>> =
        found.iter().map(|(_, range)| range.clone()).collect();
    // An instant written without a zone leaves it to be worked out.
    let dates = found
        .into_iter()
        .map(|(date, _)| date)
        .collect::<Option<_>>()?;
    // A month named without a full date around it (`in March`, `March 8`) leaves the day or
    // year to be worked out.
    let month_alone = (patterns().english_month.ranges(&lower).into_iter())
        .any(|month| !covered.iter().any(|range| range.contains(&month.start)));
    if month_alone {
        return None;
    }
    Some(dates)
}

/// The dates written out in full in `lower` (a text with at least its ASCII letters lower-cased:
/// the patterns are ASCII), with their byte ranges; a date is `None` where an instant
/// (`with_time`) is written without a zone.
fn full_dates(lower: &str, with_time: bool) -> Vec<(Option<String>, std::ops::Range<usize>)> {
    let as_asked = |date: String, found: &Found<'_>| match with_time {
        true => instant(&date, found),
        false => Some(date),
    };
    let mut dates = Vec::new();
    for found in patterns().iso.captures_all(lower) {
        let date = format!(
            "{}-{}-{}",
            found.group("year"),
            found.group("month"),
            found.group("day")
        );
        dates.push((as_asked(date, &found), found.range()));
    }
    for found in patterns().written.captures_all(lower) {
        let date = written_date(&found).and_then(|date| as_asked(date, &found));
        dates.push((date, found.range()));
    }
    dates
}

/// The date a match of the English pattern writes (`14 April 2025`, `April 14, 2025`).
fn written_date(found: &Found<'_>) -> Option<String> {
    let month_name = found.name("month_a").or_else(|| found.name("month_b"))?;
    let day = found.name("day_a").or_else(|| found.name("day_b"))?;
    let month = ENGLISH_MONTHS
        .iter()
        .position(|name| name.starts_with(month_name.trim_end_matches('.')))?
        + 1;
    Some(format!("{}-{month:02}-{:0>2}", found.group("year"), day))
}

/// Dates (or instants) as `date` (`date-time`) values, each with the byte range of the text it
/// is written in.
pub(crate) type DateSpans = Vec<(String, std::ops::Range<usize>)>;

/// The dates (or, `with_time`, instants) `text` writes out in full, each with the byte range
/// of `text` it is written in, whatever else the text says.
pub(crate) fn date_spans(text: &str, with_time: bool) -> DateSpans {
    // The patterns read only ASCII: lowering the ASCII letters is enough, and keeps every byte
    // offset of the lowered text that of `text`.
    // An instant written without a zone is no instant, but the others in the text still are.
    full_dates(&text.to_ascii_lowercase(), with_time)
        .into_iter()
        .filter_map(|(date, range)| Some((date?, range)))
        .collect()
}

/// `date` with the time and zone `found` holds, or `None` when it holds no zone.
fn instant(date: &str, found: &Found<'_>) -> Option<String> {
    let hour = found.name("hour")?;
    let minute = found.group("minute");
    let second = found.name("second").unwrap_or("00");
    let fraction = found.group("fraction");
    let zone = match found.name("zone")? {
        "z" | "utc" | "gmt" => "Z".to_owned(),
        offset if offset.len() == 5 => format!("{}:{}", &offset[..3], &offset[3..]),
        offset => offset.to_owned(),
    };
    Some(format!(
        "{date}T{hour:0>2}:{minute}:{second}{}{zone}",
        fraction.to_uppercase()
    ))
}

/// Compiles the date patterns and runs each over a text that writes every month each way a
/// pattern reads it, among ordinary words, digits and punctuation: the regex engine builds its
/// search states lazily, on the input it meets, and a fresh instance would otherwise build them
/// again on every call (`bench/stages.py` found that a quarter of a fresh call's CPU). A
/// pre-initialised instance starts with them.
pub(crate) fn prepare() {
    let mut text = String::from(
        "2025-06-01T12:00:00Z, 2024-11-30T23:59:00.5+01:00 and 2025-01-05 09:15 gmt; \
         06/01/2025, 3.4.25; the user_42 (tags: ci, build) wrote to ada@example.org: \
         \"order #1234, 2 items at $19.99\" — no, not now; note it.\n",
    );
    for month in ENGLISH_MONTHS.iter().chain(&MONTH_ABBREVIATIONS) {
        text.push_str(&format!(
            "on 1st of {month}. 2025 at 3:30 utc, {month} 22nd, 2026, {month} 9 2027 \
             at 14:05:59 +0200, 30 {month} 1999; in {month}.\n"
        ));
    }
    let patterns = patterns();
    for pattern in [
        &patterns.iso,
        &patterns.written,
        &patterns.ambiguous,
        &patterns.english_month,
    ] {
        let _ = pattern.captures_all(&text);
        let _ = pattern.is_match(&text);
    }
}

/// The short names the patterns read besides [`ENGLISH_MONTHS`].
const MONTH_ABBREVIATIONS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sept", "sep", "oct", "nov", "dec",
];

struct Patterns {
    iso: Pattern,
    written: Pattern,
    ambiguous: Pattern,
    english_month: Pattern,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let month = "(?:january|february|march|april|may|june|july|august|september|october|\
                     november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?";
        let time = "(?:[t ]|,?\\s+(?:at\\s+)?)(?P<hour>\\d{1,2}):(?P<minute>\\d{2})\
                    (?::(?P<second>\\d{2})(?P<fraction>\\.\\d+)?)?\
                    \\s*(?P<zone>z|utc|gmt|[+-]\\d{2}:?\\d{2})?";
        let compile = |pattern: String| Pattern::new(&pattern);
        Patterns {
            iso: compile(format!(
                "\\b(?P<year>\\d{{4}})-(?P<month>\\d{{2}})-(?P<day>\\d{{2}})(?:{time})?\\b"
            )),
            written: compile(format!(
                "\\b(?:(?P<day_a>\\d{{1,2}})(?:st|nd|rd|th)?\\.?\\s+(?:of\\s+)?(?P<month_a>{month})\
                 |(?P<month_b>{month})\\s+(?P<day_b>\\d{{1,2}})(?:st|nd|rd|th)?)\
                 ,?\\s+(?P<year>\\d{{4}})\\b(?:{time})?"
            )),
            ambiguous: compile("\\b\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4}\\b".to_owned()),
            english_month: compile(format!("\\b{month}(?:\\b|$)")),
        }
    })
}

/// Texts that mention a date a reader has to work out (for the tests here and in `grounding`).
#[cfg(test)]
pub(super) const DATES_TO_WORK_OUT: [&str; 6] = [
    "Fair on 3/4/25",
    "Fair next Friday",
    "Fair tomorrow",
    "Messe am 3. März",
    "Fête demain",
    "Fair in 1999",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn dates(text: &str) -> Option<Vec<String>> {
        written_dates(text, false)
    }

    fn instants(text: &str) -> Option<Vec<String>> {
        written_dates(text, true)
    }

    #[test]
    fn only_a_text_that_gives_a_day_relative_to_today_needs_the_current_date() {
        for relative in [
            "Mike broke the build today at 2:30 pm",
            "Fair next Friday",
            "sales fell last month",
            "Treffen am Montag, übermorgen",
            "paid 3 days ago",
        ] {
            assert!(needs_the_current_date(relative), "{relative}");
        }
        for formal in [
            "Now, therefore, the parties agree that on the last day of the term",
            "This Agreement is made as of May 20, 2014 by Sun Microsystems (Wed office)",
            "the next section applies",
        ] {
            assert!(!needs_the_current_date(formal), "{formal}");
        }
    }

    #[test]
    fn full_dates_are_read_in_iso_and_english_forms() {
        assert_eq!(
            dates("The Spring Book Fair takes place on 14 April 2025 at the Central Library."),
            Some(vec!["2025-04-14".to_owned()])
        );
        assert_eq!(
            dates("Gala on March 8th, 2026, and a dinner on 1st of Sept. 2026."),
            Some(vec!["2026-03-08".to_owned(), "2026-09-01".to_owned()])
        );
        assert_eq!(
            dates("Reminder: Team Offsite, 2025-06-03, in Lisbon"),
            Some(vec!["2025-06-03".to_owned()])
        );
        assert_eq!(dates("No date here, 200 visitors"), Some(vec![]));
    }

    #[test]
    fn instants_need_a_time_and_a_zone() {
        assert_eq!(
            instants("Audit: on 5 January 2025 at 09:15 UTC, user bob-7 deleted a file"),
            Some(vec!["2025-01-05T09:15:00Z".to_owned()])
        );
        assert_eq!(
            instants("[2025-07-21T18:02:45Z] FAILURE; at 2024-11-30T23:59:00.5+01:00 again"),
            Some(vec![
                "2025-07-21T18:02:45Z".to_owned(),
                "2024-11-30T23:59:00.5+01:00".to_owned()
            ])
        );
        assert_eq!(instants("on 5 January 2025 at 09:15"), None, "no zone");
        assert_eq!(instants("on 2025-01-05"), None, "no time");
        assert_eq!(
            dates("[2025-07-21T18:02:45Z]"),
            Some(vec!["2025-07-21".to_owned()])
        );
    }

    #[test]
    fn each_span_is_of_the_text_as_written_whatever_its_letters_lower_case_to() {
        // `İ` lower-cases to three bytes from two, the Kelvin sign to one from three.
        let text = "İSTANBUL \u{212a}ONGRESS: MARCH 8, 2026 AT 09:15 UTC; ÉTÉ 2026-06-21T10:00:00Z";
        let spans = date_spans(text, true);
        let written: Vec<_> = spans
            .iter()
            .map(|(_, range)| &text[range.clone()])
            .collect();
        assert_eq!(
            written,
            ["2026-06-21T10:00:00Z", "MARCH 8, 2026 AT 09:15 UTC"]
        );
        let values: Vec<_> = spans.iter().map(|(value, _)| value.as_str()).collect();
        assert_eq!(values, ["2026-06-21T10:00:00Z", "2026-03-08T09:15:00Z"]);
    }

    #[test]
    fn days_only_a_reader_can_resolve_are_left_to_the_model() {
        for text in [
            "Call me tomorrow at 3",
            "See you on Friday, 2025-06-06",
            "Due March 8",
            "Sometime in March 2026",
            "Payment on 3/4/25",
            "Am 3. März 2025",
            "Due yesterday, 2025-06-01",
        ] {
            assert_eq!(dates(text), None, "{text}");
        }
    }

    #[test]
    fn a_date_is_mentioned_by_a_year_a_name_a_relative_day_or_joined_numbers() {
        for dated in ["Fair on 14 April 2025", "Fair, 2025-06-03"]
            .into_iter()
            .chain(DATES_TO_WORK_OUT)
        {
            assert!(mentions_a_date(dated), "{dated}");
        }
        for undated in [
            "The Science Fair, with 200 visitors; the date hasn't been decided.",
            "user=eve_12 status=success",
            "Fair: 3.5 stars",
        ] {
            assert!(!mentions_a_date(undated), "{undated}");
        }
    }
}
