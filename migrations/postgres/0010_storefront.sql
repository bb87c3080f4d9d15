-- What a customer reads about what they book (issue 16): the store's address, phone and a short
-- description, and a product's description. Empty: not said. Edited in the back office.
ALTER TABLE stores ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE stores ADD COLUMN phone TEXT NOT NULL DEFAULT '';
ALTER TABLE stores ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE products ADD COLUMN description TEXT NOT NULL DEFAULT '';
