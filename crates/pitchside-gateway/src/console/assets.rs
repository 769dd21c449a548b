//! The page, embedded in the binary (no external requests): `index.html`,
//! `app.js`, `style.css` from `src/console/assets/`.

/// `GET /`.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// `GET /app.js`.
pub const APP_JS: &str = include_str!("assets/app.js");
/// `GET /style.css`.
pub const STYLE_CSS: &str = include_str!("assets/style.css");
