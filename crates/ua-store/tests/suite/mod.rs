mod files;
mod reconstruct;
