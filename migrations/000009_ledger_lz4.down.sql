ALTER TABLE ingests ALTER COLUMN artifacts SET COMPRESSION default,
                    ALTER COLUMN summary SET COMPRESSION default;
