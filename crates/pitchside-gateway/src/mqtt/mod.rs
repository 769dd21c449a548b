//! MQTT plumbing shared by the MQTT source and the alerts output: broker
//! settings and TLS from a config section, and how connection errors are
//! described to an operator.

pub mod conn;
