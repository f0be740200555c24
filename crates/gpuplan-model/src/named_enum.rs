//! Enumerations named in flags and files: each variant has one canonical name, accepted
//! aliases, and an error listing the valid names.

macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                let folded = text.trim().to_lowercase();
                match folded.as_str() {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    _ => {
                        let names = [$($text),+];
                        let near = $crate::suggestion::did_you_mean(text, names)
                            .map_or(String::new(), |near| format!("did you mean `{near}`? "));
                        Err(format!(
                            concat!("unknown ", $what, " `{}` ({}expected one of: {})"),
                            text,
                            near,
                            names.join(", ")
                        ))
                    }
                }
            }
        }
    };
}

pub(crate) use named_enum;
