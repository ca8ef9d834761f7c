//! Where a page's visible area is and how it is turned: the crop box (within the media box)
//! and `/Rotate`, so that a glyph's place is given as a reader sees the page — points from the
//! top-left corner of the visible area, as pdfplumber and Docling give words.

use super::file::File;
use super::layout::Place;
use super::syntax::Dict;

/// The media box a page without one has: US Letter, as readers assume.
const LETTER: [f32; 4] = [0.0, 0.0, 612.0, 792.0];

/// A page's visible area in its own space (y upwards) and its turn, a multiple of 90° clockwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    quarter_turns: u8,
}

impl Frame {
    /// The frame `page` states (its attributes inherited already).
    pub fn of(file: &File, page: &Dict) -> Frame {
        let media = rectangle(file, page, b"MediaBox").unwrap_or(LETTER);
        let [x0, y0, x1, y1] = match rectangle(file, page, b"CropBox") {
            // The visible area is the crop box clipped to the media box.
            Some(crop) => [
                crop[0].max(media[0]),
                crop[1].max(media[1]),
                crop[2].min(media[2]),
                crop[3].min(media[3]),
            ],
            None => media,
        };
        let (x1, y1) = (x1.max(x0), y1.max(y0));
        let rotate = page
            .get(b"Rotate")
            .map(|rotate| file.resolve(rotate))
            .and_then(|rotate| rotate.int())
            .unwrap_or(0);
        Frame {
            x0,
            y0,
            x1,
            y1,
            quarter_turns: (rotate.rem_euclid(360) / 90) as u8,
        }
    }

    /// The page's width and height as it is shown, points.
    pub fn size(&self) -> (f32, f32) {
        let (width, height) = (self.x1 - self.x0, self.y1 - self.y0);
        match self.quarter_turns {
            1 | 3 => (height, width),
            _ => (width, height),
        }
    }

    /// `place` (in the page's space) as the page is shown: `x0`/`x1` from its left edge, `top`/
    /// `bottom` from its top edge. [`Place::NOWHERE`] stays nowhere.
    pub fn shown(&self, place: Place) -> Place {
        if !place.is_somewhere() {
            return place;
        }
        let (width, height) = (self.x1 - self.x0, self.y1 - self.y0);
        // Unturned: from the visible area's top-left corner, downwards.
        let (left, right) = (place.x0 - self.x0, place.x1 - self.x0);
        let (top, bottom) = (self.y1 - place.top, self.y1 - place.bottom);
        let [x0, x1, top, bottom] = match self.quarter_turns {
            // A quarter turn clockwise: the left edge becomes the top.
            1 => [height - bottom, height - top, left, right],
            2 => [width - right, width - left, height - bottom, height - top],
            3 => [top, bottom, width - right, width - left],
            _ => [left, right, top, bottom],
        };
        Place {
            x0,
            x1,
            bottom,
            top,
            line: place.line,
        }
    }
}

/// The rectangle `key` of `page`, corners normalised; `None` when it is absent or not four
/// numbers.
fn rectangle(file: &File, page: &Dict, key: &[u8]) -> Option<[f32; 4]> {
    let value = file.resolve(page.get(key)?);
    let numbers: Vec<f32> = (value.array()?.iter())
        .filter_map(|item| file.resolve(item).number())
        .map(|number| number as f32)
        .collect();
    let [a, b, c, d] = numbers[..] else {
        return None;
    };
    if !numbers.iter().all(|number| number.is_finite()) {
        return None;
    }
    Some([a.min(c), b.min(d), a.max(c), b.max(d)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(quarter_turns: u8) -> Frame {
        // A 100 × 200 visible area whose corner is at (10, 20).
        Frame {
            x0: 10.0,
            y0: 20.0,
            x1: 110.0,
            y1: 220.0,
            quarter_turns,
        }
    }

    /// A glyph 10 wide and 5 tall whose box's lower-left corner is 30 right of and 40 above the
    /// visible area's lower-left corner.
    const GLYPH: Place = Place {
        x0: 40.0,
        x1: 50.0,
        bottom: 60.0,
        top: 65.0,
        line: 0,
    };

    fn corners(place: Place) -> [f32; 4] {
        [place.x0, place.top, place.x1, place.bottom]
    }

    #[test]
    fn a_place_is_measured_from_the_shown_pages_top_left_corner() {
        assert_eq!(frame(0).size(), (100.0, 200.0));
        assert_eq!(corners(frame(0).shown(GLYPH)), [30.0, 155.0, 40.0, 160.0]);
        // Turned a quarter clockwise: 200 wide, 100 tall; the old bottom edge is the left.
        assert_eq!(frame(1).size(), (200.0, 100.0));
        assert_eq!(corners(frame(1).shown(GLYPH)), [40.0, 30.0, 45.0, 40.0]);
        assert_eq!(corners(frame(2).shown(GLYPH)), [60.0, 40.0, 70.0, 45.0]);
        assert_eq!(corners(frame(3).shown(GLYPH)), [155.0, 60.0, 160.0, 70.0]);
        assert!(!frame(1).shown(Place::NOWHERE).is_somewhere());
    }
}
