mod conversation;
