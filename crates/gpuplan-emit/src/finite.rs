//! Every number gpuplan prints must be a number: JSON writes NaN and infinity as `null`,
//! which a reader would take for "not applicable". [`first_non_finite`] walks any
//! serialisable value and names the first field that holds one.

use serde::ser::{self, Serialize};
use std::fmt;

/// The path of the first NaN or infinite number in `value` (`memory.per_gpu_bytes`), or
/// `None` when every number is finite.
pub fn first_non_finite(value: &impl Serialize) -> Option<String> {
    let mut walker = Walker { path: Vec::new() };
    match value.serialize(&mut walker) {
        Ok(()) => None,
        Err(Found(path)) => Some(path),
    }
}

/// The error the walk stops with: where the bad number is.
#[derive(Debug)]
struct Found(String);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "non-finite number at {}", self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Found(message.to_string())
    }
}

struct Walker {
    path: Vec<String>,
}

impl Walker {
    fn float(&self, value: f64) -> Result<(), Found> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(Found(if self.path.is_empty() {
                "the top level".to_string()
            } else {
                self.path.join(".")
            }))
        }
    }

    fn field<T: Serialize + ?Sized>(&mut self, name: String, value: &T) -> Result<(), Found> {
        self.path.push(name);
        let result = value.serialize(&mut *self);
        self.path.pop();
        result
    }
}

/// Serializer methods that hold no number.
macro_rules! nothing {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<(), Found> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    nothing!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_f32(self, value: f32) -> Result<(), Found> {
        self.float(f64::from(value))
    }

    fn serialize_f64(self, value: f64) -> Result<(), Found> {
        self.float(value)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Found> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Found> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.field(variant.to_string(), value)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        Ok(Compound::new(self))
    }
}

/// A sequence, map or struct being walked: elements are named by their index or key.
struct Compound<'a> {
    walker: &'a mut Walker,
    index: usize,
    key: Option<String>,
}

impl<'a> Compound<'a> {
    fn new(walker: &'a mut Walker) -> Compound<'a> {
        Compound {
            walker,
            index: 0,
            key: None,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        let name = format!("[{}]", self.index);
        self.index += 1;
        self.walker.field(name, value)
    }
}

/// The compound forms whose elements are positional: each is walked as `[index]`.
macro_rules! positional {
    ($($form:ident :: $method:ident),* $(,)?) => {
        $(impl ser::$form for Compound<'_> {
            type Ok = ();
            type Error = Found;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
                self.element(value)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        })*
    };
}

positional!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Found> {
        self.key = Some(
            serde_json::to_string(key)
                .unwrap_or_default()
                .trim_matches('"')
                .to_string(),
        );
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        let name = self.key.take().unwrap_or_default();
        self.walker.field(name, value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

/// The compound forms whose fields are named: each is walked under its name.
macro_rules! named {
    ($($form:ident),* $(,)?) => {
        $(impl ser::$form for Compound<'_> {
            type Ok = ();
            type Error = Found;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<(), Found> {
                self.walker.field(name.to_string(), value)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        })*
    };
}

named!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Inner {
        rate: f64,
        label: &'static str,
    }

    #[derive(Serialize)]
    struct Outer {
        count: u32,
        inner: Option<Inner>,
        rows: Vec<Inner>,
        by_name: BTreeMap<String, f64>,
    }

    fn outer(bad_row: f64, bad_entry: f64) -> Outer {
        Outer {
            count: 1,
            inner: Some(Inner { rate: 1.0, label: "a" }),
            rows: vec![
                Inner { rate: 2.0, label: "b" },
                Inner {
                    rate: bad_row,
                    label: "c",
                },
            ],
            by_name: [("x".to_string(), bad_entry)].into_iter().collect(),
        }
    }

    #[test]
    fn finds_the_path_of_a_nan_or_an_infinity() {
        assert_eq!(first_non_finite(&outer(3.0, 4.0)), None);
        assert_eq!(
            first_non_finite(&outer(f64::NAN, 4.0)).as_deref(),
            Some("rows.[1].rate")
        );
        assert_eq!(
            first_non_finite(&outer(3.0, f64::INFINITY)).as_deref(),
            Some("by_name.x")
        );
        assert_eq!(first_non_finite(&f64::NAN).as_deref(), Some("the top level"));
    }
}
