mod conversation;
mod schema;
