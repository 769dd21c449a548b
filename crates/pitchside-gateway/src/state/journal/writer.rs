//! Writing one journal generation ([`Journal`]): the header, then framed
//! records, buffered and made durable by [`Journal::sync`].

use super::format::{encode, MAGIC, VERSION};
use super::{file_of, io, JournalError};
use crate::model::RawInput;
use crate::state::frame;
use crate::util::codec::Enc;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// An open journal generation.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    gen: u64,
    out: BufWriter<File>,
    unsynced: bool,
    /// The record being framed, kept to reuse its allocation.
    record: Vec<u8>,
}

impl Journal {
    /// Opens generation `gen` for appending (creating the folder and file).
    /// A new file gets the header; it reaches the disk with the first
    /// [`Journal::sync`] (until then an empty file, which replays as no
    /// records, is just as good).
    pub fn open(dir: &Path, gen: u64) -> Result<Journal, JournalError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let path = file_of(dir, gen);
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let fresh = f.metadata().map_err(io(&path))?.len() == 0;
        // The new file's directory entry must survive a power cut too.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
        let mut out = BufWriter::with_capacity(256 * 1024, f);
        if fresh {
            let mut header = Vec::with_capacity(frame::HEADER_LEN);
            frame::put_header(&mut header, MAGIC, VERSION);
            out.write_all(&header).map_err(io(&path))?;
        }
        Ok(Journal {
            dir: dir.to_path_buf(),
            gen,
            out,
            unsynced: false,
            record: Vec::new(),
        })
    }

    /// The generation being written.
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// Appends an input (buffered; durable after [`Journal::sync`]);
    /// returns the bytes its record takes.
    pub fn append(&mut self, input: &RawInput) -> Result<u64, JournalError> {
        let mut e = Enc(std::mem::take(&mut self.record));
        e.0.clear();
        e.0.resize(frame::CURRENT.head_len(), 0);
        encode(&mut e, input);
        frame::CURRENT.fill_head(&mut e.0, 0);
        let written = self.out.write_all(&e.0);
        let len = e.0.len() as u64;
        self.record = e.0;
        written.map_err(io(&file_of(&self.dir, self.gen)))?;
        self.unsynced = true;
        Ok(len)
    }

    /// Whether appended inputs are waiting for [`Journal::sync`].
    pub fn unsynced(&self) -> bool {
        self.unsynced
    }

    /// Makes everything appended durable (write + fdatasync).
    pub fn sync(&mut self) -> Result<(), JournalError> {
        if !self.unsynced {
            return Ok(());
        }
        let path = file_of(&self.dir, self.gen);
        self.out.flush().map_err(io(&path))?;
        self.out.get_ref().sync_data().map_err(io(&path))?;
        self.unsynced = false;
        Ok(())
    }

    /// Syncs and starts the next generation; returns its number.
    pub fn rotate(&mut self) -> Result<u64, JournalError> {
        self.sync()?;
        *self = Journal::open(&self.dir, self.gen + 1)?;
        Ok(self.gen)
    }
}
